"""Self-signed TLS material for a local server: a CA, a server certificate it signs for
`localhost`/127.0.0.1/::1, and a client certificate it signs (for mutual TLS), as PEM files.

For tests and `LocalServer(tls=True)`; a real deployment brings certificates of its own.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from aistore._internal.extras import require_extra

require_extra("tls", "cryptography", what="LocalServer(tls=True)'s certificates")

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

__all__ = ["TlsFiles", "make_ca", "make_tls_files"]

_VALIDITY = datetime.timedelta(days=30)


@dataclass(frozen=True)
class TlsFiles:
    """PEM file paths: the CA, the server's pair, the client's pair (all keys unencrypted)."""

    ca_cert: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def make_ca(
    directory: Path, stem: str = "ca"
) -> tuple[Path, x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A self-signed CA written to `directory/<stem>.crt`; returns the path, certificate, key."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(f"aistore test {stem}"))
        .issuer_name(_name(f"aistore test {stem}"))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    path = directory / f"{stem}.crt"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, cert, key


def _leaf(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    common_name: str,
    usage: x509.ObjectIdentifier,
    san: list[x509.GeneralName] | None,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def make_tls_files(directory: str | Path) -> TlsFiles:
    """A CA and the server and client certificates it signs, written into `directory`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    ca_path, ca_cert, ca_key = make_ca(d)
    san: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    ]
    files = TlsFiles(
        ca_cert=ca_path,
        server_cert=d / "server.crt",
        server_key=d / "server.key",
        client_cert=d / "client.crt",
        client_key=d / "client.key",
    )
    for cert_path, key_path, cn, usage, names in (
        (files.server_cert, files.server_key, "localhost", ExtendedKeyUsageOID.SERVER_AUTH, san),
        (
            files.client_cert,
            files.client_key,
            "aistore client",
            ExtendedKeyUsageOID.CLIENT_AUTH,
            None,
        ),
    ):
        cert, key = _leaf(ca_cert, ca_key, cn, usage, names)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, key_path)
    return files
