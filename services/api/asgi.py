"""The app for ``uvicorn services.api.asgi:app`` (several API processes): configured from the environment."""

from services.api.app import create_app
from services.operating.config import settings_or_exit
from services.table.tracing import configure_tracing
from services.telemetry.structured_logging import configure_logging

settings = settings_or_exit("tablestream API")  # every setting checked before the app is built
configure_logging()
configure_tracing()
app = create_app(settings)
