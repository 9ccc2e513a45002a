"""supervise: run an experiment, carry out the catalog's fix for a known failure, re-run,
and escalate instead of looping.

    loop.supervise(Options, Services) -> Iterator[record]   the run's events
    policy.decide(diagnosis, Setup, History, FixContext)    fix, plain re-run or escalate
    fixes.plan(action, Setup, FixContext)                   a catalog action -> next Setup
    args.find/scale/add                                     one argument in every spelling
    escalation.write_files(doc, folders, when, redactor)    the .md/.json escalation files
    registration.Registration / prune                       the run's file in the state dir

The child process, its output and its process group are labctl.backends.child's (with
sink.py and proc.py); pip and the notify command are labctl.backends.localrun's. poll reads
the registrations through the `supervise` scheduler (labctl/cluster/supervise.py, which
documents their fields).
"""
