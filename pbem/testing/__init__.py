"""What the tests, benchmarks and development scripts use; the product never does.

- ``mailservers``: real Dovecot (IMAP + LMTP) and an aiosmtpd SMTP relay on
  127.0.0.1 (aiosmtpd is in the ``test`` extra of pyproject.toml).
- ``sample``: a fixed, seeded bot game turned into report inputs.

No runtime module imports this package (tests/project/test_architecture.py checks
it), so an install without the ``test`` extra never needs aiosmtpd.
"""
