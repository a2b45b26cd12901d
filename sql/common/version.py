"""The PostgreSQL version nyala answers as: in ParameterStatus, SHOW and ``version()``."""

SERVER_VERSION = "15.0 (nyala 0.1.0)"
SERVER_VERSION_NUM = "150000"
VERSION_STRING = (
    f"PostgreSQL {SERVER_VERSION.split()[0]} (nyala 0.1.0) on x86_64-pc-linux-gnu, "
    "compiled by Python, 64-bit"
)
