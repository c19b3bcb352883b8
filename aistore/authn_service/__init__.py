"""aistore-authn: an AuthN service wire-compatible with AIStore's AuthN (`cmd/authn`).

Run it as `aistore-authn` (see `--help`, and "Access control: AuthN service" in the user guide);
clients use `aistore.sdk.authn.AuthNClient` or the official SDK's. Modules: `main` (startup),
`httpd` (HTTP), `service` (operations), `store` (SQLite), `keys` (signing), `passwords`,
`clusters` (calls to registered clusters), `wire` (request documents).
"""

__all__: list[str] = []
