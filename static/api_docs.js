/* /api/docs: Swagger UI (static/vendor/swagger-ui/, installed from npm) renders the service's OpenAPI document,
   whose address the page names in data-spec (behind a proxy's prefix too). */
"use strict";

window.addEventListener("DOMContentLoaded", () => {
  window.ui = SwaggerUIBundle({
    url: document.body.dataset.spec,
    dom_id: "#api-docs",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
  });
});
