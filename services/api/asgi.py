"""The app for ``uvicorn services.asgi:app`` (several API processes): configured from the environment."""

from services.app import create_app
from services.config import Settings
from services.logging import configure

configure()
app = create_app(Settings.from_env())
