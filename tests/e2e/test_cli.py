# The CLI fails cleanly on bad usage.
import subprocess


def test_unknown_command_fails_with_message(tessera_bin):
    r = subprocess.run([tessera_bin, "no-such-command"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "unknown command" in r.stderr
