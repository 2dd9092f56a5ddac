#!/usr/bin/env bash
# Rebuild vendor/dvc-plots/template.html: the HTML template `dvc plots show` fills in,
# with vega, vega-lite and vega-embed inlined so the page renders with no network
# (DVC's default template loads them from a CDN). Versions are the ones dvc-render uses.
# Needs npm (the npm registry); the result is committed, so users never run this.
set -euo pipefail
cd "$(dirname "$0")/.."
out=vendor/dvc-plots
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent vega@5.20.2 vega-lite@5.2.0 vega-embed@6.18.2 >/dev/null)
for pkg in vega-5.20.2 vega-lite-5.2.0 vega-embed-6.18.2; do
  mkdir -p "$tmp/$pkg" && tar xzf "$tmp/$pkg.tgz" -C "$tmp/$pkg" --strip-components=1
  cp "$tmp/$pkg/LICENSE" "$out/LICENSE.${pkg%-*}"
done
{
  cat <<'HTML'
<!DOCTYPE html>
<html>
<head>
    {refresh_tag}
    <meta charset="utf-8">
    <title>benchcurate plots</title>
    <!-- vega 5.20.2, vega-lite 5.2.0, vega-embed 6.18.2 inlined (BSD-3-Clause, see LICENSE.*) -->
HTML
  for f in vega-5.20.2/build/vega.min.js vega-lite-5.2.0/build/vega-lite.min.js \
           vega-embed-6.18.2/build/vega-embed.min.js; do
    printf '    <script>\n'
    sed 's#</script#<\\/script#g' "$tmp/$f"
    printf '\n    </script>\n'
  done
  cat <<'HTML'
    <style>
        body { font-family: sans-serif; }
        table { border-spacing: 15px; }
    </style>
</head>
<body>
    {plot_divs}
</body>
</html>
HTML
} > "$out/template.html"
echo "wrote $out/template.html ($(wc -c < "$out/template.html") bytes)"
