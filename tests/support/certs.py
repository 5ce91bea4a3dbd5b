"""A self-signed certificate for a test's server (tests/examples, tests/clients, tests/load;
bench/lib/common.py too): EC P-256, valid a day, for one name.

    from certs import self_signed
    cert, key = self_signed(work)                 # work/cert.pem, work/key.pem for localhost
    cert, key = self_signed(work, "127.0.0.1")    # subjectAltName IP:127.0.0.1
"""

import ipaddress
import subprocess
from pathlib import Path


def self_signed(directory, name: str = "localhost") -> tuple[str, str]:
    """Writes directory/cert.pem and directory/key.pem for `name` (its CN and its
    subjectAltName, an IP address or a DNS name) and returns their paths."""
    cert, key = str(Path(directory) / "cert.pem"), str(Path(directory) / "key.pem")
    try:
        ipaddress.ip_address(name)
        san = f"IP:{name}"
    except ValueError:
        san = f"DNS:{name}"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days",
                    "1", "-subj", f"/CN={name}", "-addext", f"subjectAltName={san}"],
                   check=True, capture_output=True)
    return cert, key
