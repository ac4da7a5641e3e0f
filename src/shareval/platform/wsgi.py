import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shareval.platform.settings")
application = get_wsgi_application()

from .accounts import background  # noqa: E402  (after Django is set up)

background.start()          # password-reset mail goes out after the response
