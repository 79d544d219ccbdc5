"""Approvals: dangerous actions wait for the user.

``classify`` decides whether a shell command is safe, dangerous or forbidden
(``rules.py`` is the table); ``gate`` holds dangerous tool calls until the
surface's approver answers, and records every decision with the tool message.
"""

from hermes.approvals.classify import Finding, Verdict, classify

__all__ = ["Finding", "Verdict", "classify"]
