"""Protocol buffer messages for the tinyhttp access-log wire format."""
