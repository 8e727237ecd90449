"""Ingestion of triggers: SNS controller status messages and HyperPod's EventBridge events parsed
into typed values, bad input kept on a dead-letter queue, redeliveries and storms de-duplicated,
and what remains turned into a verification run or a notice to people (a cluster event's
metadata also into an incident, opened through IncidentFunction). :mod:`.function` holds the two
functions that do it (ControllerStatusFunction, HyperPodEventFunction) with their settings,
:mod:`.settings` the parts of those settings. May import the shared runtime modules and
:mod:`hyperpod_ha.runs`; only the handlers import it."""
