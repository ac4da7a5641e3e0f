"""E-mail: who gets which message, opt-outs, and idempotent sending."""
