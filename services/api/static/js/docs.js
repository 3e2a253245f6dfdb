// Swagger UI on the server's own /openapi.json; every asset is served locally under /docs/assets.
window.ui = window.SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
