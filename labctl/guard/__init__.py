"""`labctl guard`: the runbook's standing guardrails as checked policy.

`rules` reads `[[guard.rules]]`; `jobs` checks job records against the job rules
(max_running, concluded); `resources` counts a resource listed by a command (max_count);
`settings` reads launch configs with their parsers (forbid_setting); `stored` is the one
place that reads poll's state store; `admit` is the admission check before a launch.
guard never cancels, kills or edits anything.
"""
