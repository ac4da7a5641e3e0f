import os

from django.core.wsgi import get_wsgi_application

from shareval.platform.home import lock, private_umask

private_umask()                  # under any WSGI server: the data folder stays private
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shareval.platform.settings")
application = get_wsgi_application()

from shareval.platform.accounts import background  # noqa: E402  (after Django is set up)

background.start()          # password-reset mail goes out after the response

from django.conf import settings  # noqa: E402

lock(settings.HOME, settings.CODERUN_DIR)
