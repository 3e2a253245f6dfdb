"""The app for ``uvicorn services.api.asgi:app`` (several API processes): configured from the environment."""

from services.api.app import create_app
from services.config import Settings
from services.structured_logging import configure_logging

configure_logging()
app = create_app(Settings.from_env())
