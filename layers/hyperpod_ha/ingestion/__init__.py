"""Ingestion of triggers: SNS controller status messages and HyperPod's EventBridge events parsed
into typed values, bad input kept on a dead-letter queue, redeliveries and storms de-duplicated,
and what remains turned into a verification run or a notice to people (a cluster event's
metadata also into an incident, opened through IncidentFunction); with the services of the
two functions that do it (``*_function``). May import the shared runtime modules and
:mod:`hyperpod_ha.runs`; only the handlers import it."""
