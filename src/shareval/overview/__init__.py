"""The organizers' report: a phase's results as overview papers print them."""
