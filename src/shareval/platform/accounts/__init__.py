"""Users' API tokens and registration (Django's own User and password hashing)."""
