"""The organizers' report: every table and figure of an overview paper, built from a
competition's stored scores (``shareval server report``, the organize page's Report)."""
