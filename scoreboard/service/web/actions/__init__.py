"""What the API and the operator page both do for an operator, each written once: acknowledge alarms (`alarms`), read a
table's audit trail (`audit`), change a table's live settings (`settings`). The routes check who asks; these act."""
