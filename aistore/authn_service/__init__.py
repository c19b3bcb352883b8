"""aistore-authn: an AuthN service wire-compatible with AIStore's AuthN (`cmd/authn`).

Run it as `aistore-authn` (see `--help`, and "Access control: AuthN service" in the user guide);
clients use `aistore.sdk.authn.AuthNClient` or the official SDK's. `LocalAuthN` runs it in a
subprocess on a free loopback port. Modules: `main` (startup), `listener` (sockets, TLS,
connection and time limits, on cheroot), `httpd` (routing and the WSGI adapter), `service`
(operations), `throttle` (failed-login lockouts), `store` (SQLite), `keys` (signing),
`passwords` (scrypt, bounded in concurrency), `clusters` (calls to registered clusters), `wire`
(request documents), `local` (`LocalAuthN`).

Example:
    >>> from aistore.authn_service import LocalAuthN
    >>> with LocalAuthN() as authn:  # doctest: +SKIP
    ...     print(authn.url)
"""

from aistore.authn_service.local import LocalAuthN

__all__ = ["LocalAuthN"]
