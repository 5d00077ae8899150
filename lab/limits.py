"""Process limits for the workers that render untrusted templates."""

from __future__ import annotations

import resource

MIB = 1024 * 1024


def cap_address_space(megabytes: int) -> None:
    """Limit this process's address space; 0 leaves it unlimited."""
    if megabytes <= 0:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = megabytes * MIB
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
