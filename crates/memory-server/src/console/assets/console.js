// The memory console's only script: reading a chosen archive file into the import form's
// text field (the form also works by pasting). No memory content is ever evaluated.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const input of document.querySelectorAll("input[type=file][data-fill]")) {
    input.addEventListener("change", async () => {
      const target = document.getElementById(input.dataset.fill);
      const file = input.files && input.files[0];
      if (file && target) {
        target.value = await file.text();
      }
    });
  }
});
