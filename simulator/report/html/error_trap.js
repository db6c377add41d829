// Runs first: any error while the page loads or draws (an exception, a failed resource, a
// console.error) is shown at the top of the page and counted in the html element's data-errors, so a
// headless browser's DOM dump tells whether the page rendered cleanly.
(function () {
  'use strict';
  var errors = [];
  function show(message) {
    errors.push(String(message));
    document.documentElement.setAttribute('data-errors', String(errors.length));
    var box = document.getElementById('stepsim-errors');
    if (box) {
      box.style.display = 'block';
      box.textContent = 'This page hit an error while drawing: ' + errors.join(' | ');
    }
  }
  window.addEventListener('error', function (e) {
    var target = e.target && e.target !== window ? e.target : null;
    show(target ? 'could not load ' + (target.src || target.href || target.tagName) : e.message);
  }, true);
  window.addEventListener('unhandledrejection', function (e) { show('unhandled rejection: ' + e.reason); });
  var consoleError = console.error;
  console.error = function () {
    show(Array.prototype.join.call(arguments, ' '));
    return consoleError.apply(console, arguments);
  };
  document.addEventListener('DOMContentLoaded', function () {
    if (errors.length) show(errors.pop());
  });
})();
