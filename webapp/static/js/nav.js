// The site menu on narrow screens: the "Menu" button shows and hides it and keeps aria-expanded
// true to what is on screen; Escape closes it and gives the focus back to the button. Wide screens
// show the menu always (site.css hides the button there).
(function () {
  "use strict";

  function toggle() { return document.querySelector(".menu-toggle"); }

  function setOpen(button, open) {
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }

  document.addEventListener("click", function (event) {
    var button = toggle();
    if (button && event.target.closest(".menu-toggle") === button) {
      setOpen(button, button.getAttribute("aria-expanded") !== "true");
    }
  });

  document.addEventListener("keydown", function (event) {
    var button = toggle();
    if (event.key !== "Escape" || !button || button.getAttribute("aria-expanded") !== "true") return;
    var menu = document.getElementById(button.getAttribute("aria-controls"));
    if (menu && menu.contains(document.activeElement)) button.focus();
    setOpen(button, false);
  });
})();
