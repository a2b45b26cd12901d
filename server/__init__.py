"""The PostgreSQL wire protocol (v3.0) on asyncio: nyala's front door.

It exposes no names of its own here: ``nyala serve`` runs ``__main__.main``,
and an embedder (or a test) builds a ``server.Server`` from a
``sql.database.Database``, a ``config.Config`` and an ``auth.Authenticator``.

Modules, bottom up (each imports only those above it in this list)::

    config      Config: every knob, with units, help, flags and NYALA_* variables
    messages    frozen dataclasses, one per protocol message, named as in the protocol docs
    scram       one SCRAM-SHA-256 exchange against a ScramVerifier (structural: any store's)
    codec       sans-IO framing: bytes <-> messages; DataRow framing of whole batches
    errors      DbError -> ErrorResponse/NoticeResponse fields; anything else -> XX000, logged
    pgtypes     type OIDs; Arrow result columns -> text/binary field values, vectorised
    params      Bind parameters (text/binary bytes) -> Python values, by OID
    portal      prepared statements, portals, result streams with row-limit suspension
    answers     RowDescription, notices and row-less answers of one result
    steps       the state of a Query between worker steps
    arrow_copy  COPY TO STDOUT (FORMAT arrow): result batches as an Arrow IPC stream
    batches     a pipelined run of Bind/Execute of one prepared INSERT, taken as one write
    copy_protocol  COPY FROM STDIN / TO STDOUT sub-protocols
    timeouts    statement_timeout and idle_in_transaction_session_timeout
    auth        authentication methods: trust, and SCRAM-SHA-256 against a RoleLookup
    startup     StartupHandshake: the first-packet loop, TLS, StartupMessage, authentication
    extended_query  Parse/Bind/Describe/Execute/Close: portals run, rows encoded, batches taken
    connection  one client: session start, the message loop, simple query, Sync, skip-to-Sync
    server      listener, BackendKeyData registry for CancelRequest, graceful shutdown
    __main__    ``nyala serve``: Config -> sql.Database.open -> Server

The server knows nothing of tablets, files or the catalog (import-linter
forbids ``server -> catalog``): it talks to ``sql.session.database``
(``Database.session``, ``Database.roles``, which auth sees only through its
``RoleLookup`` protocol) and ``sql.session.session`` (``execute``, ``prepare``,
``execute_prepared``, ``transaction_status``, ``reported_parameters``,
``sync_ready`` and ``ready_for_query`` (a Sync's end and a ReadyForQuery's
contents in one call each), ``cancel``, ``report_idle``, ``close``, and ``prepared_statements``, the named statements
Parse shares with SQL PREPARE), reads back ``sql.common.result`` objects, and
uses ``sql.frontend.statements.CopyOptions``, ``sql.session.settings.duration_ms`` and
``sql.execution.backends.ClientLink`` (how pg_cancel_backend and pg_terminate_backend,
run by another session on its own thread, reach this connection through the event loop).

Connection lifecycle:

1. Accept; TCP_NODELAY; a process id and secret for BackendKeyData.
2. First-packet loop (``startup``): SSLRequest gets ``S`` and a TLS
   handshake when the server has a certificate, else ``N``; GSSENCRequest
   gets ``N``; the next packet is read on the same socket.  A CancelRequest
   cancels the matching connection's statement and closes; a StartupMessage
   (3.0) moves on, refused with 28000 in the clear under ``tls_required``.
3. Authentication (``auth``), then ``Database.session``; a wrong database
   name is FATAL 3D000.  ParameterStatus for every reported setting,
   BackendKeyData, ReadyForQuery.
4. Messages are answered in order as they arrive.  Query runs each statement
   in turn and stops at the first error.  Parse/Bind/Describe/Execute/Close
   work on the registry in ``portal``; after an error, messages are skipped
   up to Sync.  Sync drops the unnamed portal (every portal outside a
   transaction block) and sends ReadyForQuery with the transaction status,
   preceded by ParameterStatus for settings that changed.
5. Terminate, end of stream, or a FATAL error closes the session, rolling
   back an open transaction.

Session calls and row encoding run on the connection's own statement thread,
so a statement that waits (row lock, group commit, COPY data) holds no resource
another session needs; only a statement that never waits (``Session.runs_inline``:
a short read by key, a keyed write that finds its row unlocked) runs on the event
loop, where a thread hop would cost more than it.  Output is buffered until a
sync point or ``write_buffer_bytes``.

When a client misbehaves, look first at:

* the message sequence: run the client against a real PostgreSQL 15 and
  against nyala with ``--log-level DEBUG``, and compare.  The raw-protocol
  tests in ``tests/e2e/test_protocol.py`` show how to script a sequence;
* ReadyForQuery status and portal lifetimes (``connection._ready_for_query``,
  ``portal.PortalRegistry.end_of_transaction``): drivers decide BEGIN and
  re-preparation from them;
* type OIDs, typmods and value spellings (``pgtypes``, ``params``): drivers parse text
  values by OID, and pgjdbc checks ``client_encoding``, ``DateStyle`` and
  ``server_version`` from ParameterStatus;
* SQLSTATEs (``errors``): drivers choose exception classes by the C field.
"""
