"""The organizers' report: tables, significance and figures of an overview paper."""
