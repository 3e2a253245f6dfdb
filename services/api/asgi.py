"""The app for ``uvicorn services.api.asgi:app`` (several API processes): configured from the environment."""

from services.api.app import create_app
from services.config import Settings
from services.structured_logging import configure_logging
from services.tracing import configure_tracing

configure_logging()
configure_tracing()
app = create_app(Settings.from_env())
