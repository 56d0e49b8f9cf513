"""The XLA HLO text frontend (../shared/docs/hlo_text.md)."""
