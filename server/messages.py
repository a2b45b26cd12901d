"""The PostgreSQL v3 protocol messages, as frozen dataclasses named as in the protocol docs.

Frontend messages are what a client sends, backend messages what the server
answers.  Each class with a type byte carries it as ``TYPE``; the startup-phase
packets (StartupMessage, SSLRequest, GSSENCRequest, CancelRequest) have none and
are told apart by the code after their length.  Only ``codec`` turns these into
bytes and back, so nothing here knows the wire layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

PROTOCOL_VERSION_3_0 = 196608
SSL_REQUEST_CODE = 80877103
GSSENC_REQUEST_CODE = 80877104
CANCEL_REQUEST_CODE = 80877102

# -- frontend: startup phase -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartupMessage:
    protocol_version: int = PROTOCOL_VERSION_3_0
    parameters: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SSLRequest:
    pass


@dataclass(frozen=True, slots=True)
class GSSENCRequest:
    pass


@dataclass(frozen=True, slots=True)
class CancelRequest:
    process_id: int
    secret_key: int


# -- frontend: after startup -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PasswordMessage:
    """PasswordMessage, SASLInitialResponse and SASLResponse share type 'p'; the auth method parses it."""

    TYPE: ClassVar[bytes] = b"p"
    data: bytes


@dataclass(frozen=True, slots=True)
class Query:
    TYPE: ClassVar[bytes] = b"Q"
    query: str


@dataclass(frozen=True, slots=True)
class Parse:
    TYPE: ClassVar[bytes] = b"P"
    statement: str
    query: str
    param_oids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Bind:
    TYPE: ClassVar[bytes] = b"B"
    portal: str
    statement: str
    param_formats: tuple[int, ...] = ()
    params: tuple[bytes | None, ...] = ()
    result_formats: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Describe:
    """Describe a prepared statement (kind 'S') or a portal (kind 'P')."""

    TYPE: ClassVar[bytes] = b"D"
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class Execute:
    """Run a portal; ``max_rows`` 0 means all rows."""

    TYPE: ClassVar[bytes] = b"E"
    portal: str
    max_rows: int = 0


@dataclass(frozen=True, slots=True)
class Close:
    TYPE: ClassVar[bytes] = b"C"
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class Sync:
    TYPE: ClassVar[bytes] = b"S"


@dataclass(frozen=True, slots=True)
class Flush:
    TYPE: ClassVar[bytes] = b"H"


@dataclass(frozen=True, slots=True)
class Terminate:
    TYPE: ClassVar[bytes] = b"X"


@dataclass(frozen=True, slots=True)
class CopyData:
    TYPE: ClassVar[bytes] = b"d"
    data: bytes


@dataclass(frozen=True, slots=True)
class CopyDone:
    TYPE: ClassVar[bytes] = b"c"


@dataclass(frozen=True, slots=True)
class CopyFail:
    TYPE: ClassVar[bytes] = b"f"
    message: str


@dataclass(frozen=True, slots=True)
class CopyInResponse:
    """The backend is ready for CopyData: overall format (0 text, 1 binary) and one per column."""

    TYPE: ClassVar[bytes] = b"G"
    format: int
    column_formats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CopyOutResponse:
    TYPE: ClassVar[bytes] = b"H"
    format: int
    column_formats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class UnknownMessage:
    """A message whose type byte the codec does not decode (FunctionCall 'F' among them)."""

    type_code: bytes
    body: bytes


FrontendMessage = (
    StartupMessage
    | SSLRequest
    | GSSENCRequest
    | CancelRequest
    | PasswordMessage
    | Query
    | Parse
    | Bind
    | Describe
    | Execute
    | Close
    | Sync
    | Flush
    | Terminate
    | CopyData
    | CopyDone
    | CopyFail
    | UnknownMessage
)

# -- backend ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthenticationOk:
    TYPE: ClassVar[bytes] = b"R"


@dataclass(frozen=True, slots=True)
class AuthenticationCleartextPassword:
    TYPE: ClassVar[bytes] = b"R"


@dataclass(frozen=True, slots=True)
class AuthenticationMD5Password:
    TYPE: ClassVar[bytes] = b"R"
    salt: bytes


@dataclass(frozen=True, slots=True)
class AuthenticationSASL:
    TYPE: ClassVar[bytes] = b"R"
    mechanisms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AuthenticationSASLContinue:
    TYPE: ClassVar[bytes] = b"R"
    data: bytes


@dataclass(frozen=True, slots=True)
class AuthenticationSASLFinal:
    TYPE: ClassVar[bytes] = b"R"
    data: bytes


@dataclass(frozen=True, slots=True)
class ParameterStatus:
    TYPE: ClassVar[bytes] = b"S"
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class NotificationResponse:
    """A NOTIFY on a channel the session listens on: the notifying backend, channel, payload."""

    TYPE: ClassVar[bytes] = b"A"
    process_id: int
    channel: str
    payload: str


@dataclass(frozen=True, slots=True)
class BackendKeyData:
    TYPE: ClassVar[bytes] = b"K"
    process_id: int
    secret_key: int


@dataclass(frozen=True, slots=True)
class NegotiateProtocolVersion:
    TYPE: ClassVar[bytes] = b"v"
    newest_minor_version: int
    unrecognized_options: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReadyForQuery:
    """``status`` is the transaction status: 'I' idle, 'T' in a block, 'E' in a failed block."""

    TYPE: ClassVar[bytes] = b"Z"
    status: str


@dataclass(frozen=True, slots=True)
class FieldDescription:
    """One column of a RowDescription; ``type_size`` is pg_type.typlen."""

    name: str
    table_oid: int = 0
    column_attnum: int = 0
    type_oid: int = 25
    type_size: int = -1
    type_modifier: int = -1
    format_code: int = 0


@dataclass(frozen=True, slots=True)
class RowDescription:
    TYPE: ClassVar[bytes] = b"T"
    fields: tuple[FieldDescription, ...]


@dataclass(frozen=True, slots=True)
class DataRow:
    """One row; a value of None is SQL NULL.  Result sets are framed in bulk by ``codec``."""

    TYPE: ClassVar[bytes] = b"D"
    values: tuple[bytes | None, ...]


@dataclass(frozen=True, slots=True)
class CommandComplete:
    TYPE: ClassVar[bytes] = b"C"
    tag: str


@dataclass(frozen=True, slots=True)
class EmptyQueryResponse:
    TYPE: ClassVar[bytes] = b"I"


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """Fields keyed by their one-letter codes (S, V, C, M, D, H, P, ...), in sending order."""

    TYPE: ClassVar[bytes] = b"E"
    fields: tuple[tuple[str, str], ...]

    def get(self, code: str) -> str | None:
        return next((value for key, value in self.fields if key == code), None)


@dataclass(frozen=True, slots=True)
class NoticeResponse:
    TYPE: ClassVar[bytes] = b"N"
    fields: tuple[tuple[str, str], ...]

    def get(self, code: str) -> str | None:
        return next((value for key, value in self.fields if key == code), None)


@dataclass(frozen=True, slots=True)
class ParseComplete:
    TYPE: ClassVar[bytes] = b"1"


@dataclass(frozen=True, slots=True)
class BindComplete:
    TYPE: ClassVar[bytes] = b"2"


@dataclass(frozen=True, slots=True)
class CloseComplete:
    TYPE: ClassVar[bytes] = b"3"


@dataclass(frozen=True, slots=True)
class NoData:
    TYPE: ClassVar[bytes] = b"n"


@dataclass(frozen=True, slots=True)
class ParameterDescription:
    TYPE: ClassVar[bytes] = b"t"
    param_oids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PortalSuspended:
    TYPE: ClassVar[bytes] = b"s"


BackendMessage = (
    AuthenticationOk
    | AuthenticationCleartextPassword
    | AuthenticationMD5Password
    | AuthenticationSASL
    | AuthenticationSASLContinue
    | AuthenticationSASLFinal
    | ParameterStatus
    | NotificationResponse
    | BackendKeyData
    | NegotiateProtocolVersion
    | ReadyForQuery
    | RowDescription
    | DataRow
    | CommandComplete
    | EmptyQueryResponse
    | ErrorResponse
    | NoticeResponse
    | ParseComplete
    | BindComplete
    | CloseComplete
    | NoData
    | ParameterDescription
    | PortalSuspended
    | CopyInResponse
    | CopyOutResponse
    | CopyData
    | CopyDone
)
