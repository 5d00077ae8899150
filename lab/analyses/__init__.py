"""Templates, their analyses, and the pages, tasks and websockets around them."""
