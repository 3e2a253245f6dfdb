"""The app for ``uvicorn services.api.asgi:app`` (several API processes): configured from the environment."""

from services.api.app import create_app
from services.config import settings_or_exit
from services.structured_logging import configure_logging
from services.tracing import configure_tracing

settings = settings_or_exit("tablestream API")  # every setting checked before the app is built
configure_logging()
configure_tracing()
app = create_app(settings)
