"""The command line: `python -m analyzer SUBCOMMAND`; one module per subcommand, discovered by
`main`.
"""
