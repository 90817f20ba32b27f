"""Test and benchmark helpers for minigpt. Nothing in minigpt imports them (torch_gpt.py needs PyTorch)."""
