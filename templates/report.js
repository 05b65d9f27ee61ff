// Sorting, filtering and chart toggles. The page is complete without this script.
(function () {
  "use strict";
  var table = document.getElementById("kernel-table");
  if (table) {
    var tbody = table.tBodies[0];
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      if (!th.hasAttribute("data-sort")) return;
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-sort") === "num";
        var asc = !th.classList.contains("asc");
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var rows = Array.prototype.slice.call(tbody.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          if (numeric) {
            var fx = x === "" || x === null ? NaN : parseFloat(x), fy = y === "" || y === null ? NaN : parseFloat(y);
            if (isNaN(fx) && isNaN(fy)) return 0;
            if (isNaN(fx)) return 1;            // not available: always last
            if (isNaN(fy)) return -1;
            return asc ? fx - fy : fy - fx;
          }
          x = (x || "").toLowerCase(); y = (y || "").toLowerCase();
          return asc ? (x < y ? -1 : x > y ? 1 : 0) : (x < y ? 1 : x > y ? -1 : 0);
        });
        rows.forEach(function (r) { tbody.appendChild(r); });
      });
    });
    var filter = document.getElementById("kernel-filter");
    if (filter) {
      filter.addEventListener("input", function () {
        var q = filter.value.toLowerCase();
        Array.prototype.forEach.call(tbody.rows, function (r) {
          var name = (r.getAttribute("data-name") || "").toLowerCase();
          r.classList.toggle("hidden", q !== "" && name.indexOf(q) < 0);
        });
      });
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll("input[data-toggle-level]"), function (box) {
    box.addEventListener("change", function () {
      document.body.classList.toggle("hide-" + box.getAttribute("data-toggle-level"), !box.checked);
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("input[data-toggle-roof]"), function (box) {
    box.addEventListener("change", function () {
      var name = box.getAttribute("data-toggle-roof");
      Array.prototype.forEach.call(document.querySelectorAll('[id="roof-' + name + '"], [data-roof="' + name + '"]'),
        function (el) { el.style.display = box.checked ? "" : "none"; });
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll("[data-open-all]"), function (btn) {
    btn.addEventListener("click", function () {
      var open = btn.getAttribute("data-open-all") === "1";
      Array.prototype.forEach.call(document.querySelectorAll("details.kernel"), function (d) { d.open = open; });
    });
  });
})();
