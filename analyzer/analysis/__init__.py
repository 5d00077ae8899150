"""The differential analysis: probe capabilities, render variant pairs, diff them and read the
reasoning, content and tool-call markers off the diffs.
"""
