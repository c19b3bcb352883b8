"""`LocalAuthN`: the service started on a free port with generated secrets, its own temporary
config directory removed at stop, and none of the caller's AuthN settings leaking in."""

from __future__ import annotations

from pathlib import Path

import jwt
import pytest
import requests

from aistore.authn_service import LocalAuthN
from aistore.sdk.authn import AuthNClient
from aistore.sdk.authn.errors import ErrUserInvalidCredentials


def test_generated_secrets_temporary_directory_clean_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    # The caller's own AuthN settings must not reach the service it starts.
    monkeypatch.setenv("AIS_AUTHN_SECRET_KEY", "a-secret-from-the-callers-environment-0123")
    monkeypatch.setenv("AIS_AUTHN_PORT", "1")
    authn = LocalAuthN()
    with authn:
        conf_dir = authn.conf_dir
        assert authn.url.startswith("http://127.0.0.1:") and len(authn.su_pass) >= 16
        token = AuthNClient(authn.url).login("admin", authn.su_pass)
        assert jwt.get_unverified_header(token)["alg"] == "RS256"  # not the caller's HS256 secret
        assert (conf_dir / "authn_key.pem").exists()
        assert authn.su_pass not in authn.log
    assert not conf_dir.exists()
    assert authn.stop() is None  # stopping twice is a no-op
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{authn.url}/v1/roles", timeout=2)


def test_a_given_directory_is_kept_and_reused(tmp_path: Path) -> None:
    secrets = {"key_passphrase": "key-passphrase-1"}
    with LocalAuthN(tmp_path, su_pass="first-pass-123", **secrets) as first:
        AuthNClient(first.url).login("admin", "first-pass-123")
    assert (tmp_path / "authn.db").exists() and (tmp_path / "authn_key.pem").exists()
    # The database already holds the admin: the password given now is not the admin's.
    with LocalAuthN(tmp_path, su_pass="other-pass-123", **secrets) as second:
        AuthNClient(second.url).login("admin", "first-pass-123")
        with pytest.raises(ErrUserInvalidCredentials):
            AuthNClient(second.url).login("admin", "other-pass-123")


def test_a_service_that_cannot_start_says_why(tmp_path: Path) -> None:
    with LocalAuthN(tmp_path, key_passphrase="passphrase-1"):
        pass
    with pytest.raises(RuntimeError, match="cannot decrypt private key file"):
        LocalAuthN(tmp_path, key_passphrase="passphrase-2").start()
