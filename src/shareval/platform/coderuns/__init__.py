"""Code submissions: participants' systems run on hidden data in the sandbox."""
