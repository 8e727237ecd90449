"""Notices: AWS events the stack tells people about as messages in the one form
(:mod:`hyperpod_ha.topic_messages`), since an EventBridge rule or a CloudWatch alarm sends SNS raw
JSON without message attributes. ``aws_events`` (a failed rotation of the database secret from
CloudTrail, a state change of one of the stack's alarms, read and bounded), ``messages`` (their
messages, pure), ``function`` (NoticeFunction and its settings). May import the runtime package's
shared modules, never a feature."""
