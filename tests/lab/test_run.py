"""bin/lab's supervisor helpers: the embedded Valkey keeps its port across restarts."""

from __future__ import annotations

import socket
from pathlib import Path

from lab.run import free_port, remembered_port


def test_the_port_used_last_time_is_used_again(tmp_path: Path) -> None:
    port_file = tmp_path / "valkey" / "port"
    first = remembered_port(port_file)
    assert remembered_port(port_file) == first
    assert port_file.read_text().strip() == str(first)


def test_a_port_someone_else_took_meanwhile_is_replaced(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", free_port()))
        holder.listen()
        taken = holder.getsockname()[1]
        port_file.write_text(f"{taken}\n")
        assert remembered_port(port_file) != taken
