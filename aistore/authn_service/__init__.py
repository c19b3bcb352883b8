"""aistore-authn: an AuthN service wire-compatible with AIStore's AuthN."""
