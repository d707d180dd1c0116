"""/bot-walls/: ordinary pages carrying what bot-protection services put in every page they serve, beside the
challenge and block pages those services answer instead of the page.

Cloudflare's JavaScript detections add a script from ``/cdn-cgi/challenge-platform/scripts/jsd/`` to every
page; its challenge ("Just a moment...") loads ``/cdn-cgi/challenge-platform/h/…/orchestrate/``. Imperva
(Incapsula) adds ``/_Incapsula_Resource?SWJIYLWA=…`` to every page; its block page frames
``/_Incapsula_Resource?CWUDNSAI=…`` and names an incident. A Turnstile widget in an ordinary form frames
``…/challenge-platform/h/b/turnstile/…``. DataDome sends ``X-DataDome: protected`` with every answer of a site it
protects. A page about Akamai's "Access denied" errors is no such error page. A loading placeholder can say "Just a moment..." in an ordinary
page's text. The pages answer 200, as a JavaScript interstitial does.
"""

from __future__ import annotations

from flask import Blueprint

from test_server.routes._html import links, page

bp = Blueprint("bot_walls", __name__)

CLOUDFLARE_JSD = (
    "<script>(function(){function c(){var b=a.contentDocument||a.contentWindow.document;if(b){var "
    "d=b.createElement('script');d.innerHTML=\"window.__CF$cv$params={r:'8f1a2b3c4d5e6f70',t:'MTczMzM4'};"
    "var a=document.createElement('script');a.nonce='';a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js';"
    "document.getElementsByTagName('head')[0].appendChild(a);\";b.getElementsByTagName('head')[0]"
    ".appendChild(d)}}if(document.body){var a=document.createElement('iframe');a.height=1;a.width=1;"
    "a.style.position='absolute';a.style.top=0;a.style.left=0;a.style.border='none';"
    "a.style.visibility='hidden';document.body.appendChild(a);c()}})();</script>"
)
IMPERVA_INJECTED = (
    '<script type="text/javascript" src="/_Incapsula_Resource?SWJIYLWA=719d34d31c8e3a6e6fffd425f7e032f3&ns=1'
    '&cb=1234567"></script>'
)


@bp.get("/bot-walls/")
def top():  # type: ignore[no-untyped-def]
    return page(
        "Bot Walls",
        links(
            ("/bot-walls/cloudflare-page", "Shoes"),
            ("/bot-walls/imperva-page", "Boots"),
            ("/bot-walls/loading-page", "Sandals"),
            ("/bot-walls/turnstile-form", "Contact"),
            ("/bot-walls/datadome-page", "Socks"),
            ("/bot-walls/akamai-article", "Fixing 403s"),
            ("/bot-walls/cloudflare-challenge", "Challenged"),
            ("/bot-walls/imperva-block", "Refused"),
        ),
    )


@bp.get("/bot-walls/cloudflare-page")
def cloudflare_page():  # type: ignore[no-untyped-def]
    return page("Shoes", "<h1>Shoes</h1><p>Our shoes, for every road.</p>" + CLOUDFLARE_JSD)


@bp.get("/bot-walls/imperva-page")
def imperva_page():  # type: ignore[no-untyped-def]
    return page("Boots", "<h1>Boots</h1><p>Our boots, for every season.</p>" + IMPERVA_INJECTED)


@bp.get("/bot-walls/loading-page")
def loading_page():  # type: ignore[no-untyped-def]
    return page("Sandals", "<h1>Sandals</h1><p id='stock'>Just a moment... checking the stock.</p>")


@bp.get("/bot-walls/akamai-article")
def akamai_article():  # type: ignore[no-untyped-def]
    return page(
        "Fixing 403s",
        "<h1>Fixing 403s</h1><p>Access denied errors came from a rule on Akamai's edge; we changed it.</p>",
    )


@bp.get("/bot-walls/datadome-page")
def datadome_page():  # type: ignore[no-untyped-def]
    answer = page("Socks", "<h1>Socks</h1><p>Our socks, for every shoe.</p>")
    answer.headers["X-DataDome"] = "protected"  # with every answer of a site DataDome protects
    answer.headers["X-DataDome-CID"] = "AHrlqAAAAAMA1b2c3d4e5f6"
    return answer


@bp.get("/bot-walls/turnstile-form")
def turnstile_form():  # type: ignore[no-untyped-def]
    # a Turnstile widget as its script leaves it in the page (its frame is on challenges.cloudflare.com, here on
    # this server: the tests send nothing beyond 127.0.0.1)
    return page(
        "Contact",
        '<h1>Contact</h1><form method="post"><textarea name="message"></textarea><div class="cf-turnstile">'
        '<iframe src="/cdn-cgi/challenge-platform/h/b/turnstile/if/ov2/av0/rcv0'
        '/0/abc12/0x4AAAAAAA/auto/normal" title="Widget containing a Cloudflare security challenge"></iframe>'
        '<input type="hidden" name="cf-turnstile-response" id="cf-chl-widget-abc12_response"></div>'
        "<button>Send</button></form>",
    )


@bp.get("/bot-walls/cloudflare-challenge")
def cloudflare_challenge():  # type: ignore[no-untyped-def]
    return page(
        "Just a moment...",
        "<noscript>Enable JavaScript and cookies to continue</noscript>"
        "<script>(function(){window._cf_chl_opt={cvId: '3',cZone: 'shop.example',cType: 'managed'};"
        "var a = document.createElement('script');"
        "a.src = '/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=8f1a2b3c4d5e6f70';"
        "document.getElementsByTagName('head')[0].appendChild(a);}());</script>",
    )


@bp.get("/bot-walls/imperva-block")
def imperva_block():  # type: ignore[no-untyped-def]
    return page(
        "Request Rejected",
        '<iframe id="main-iframe" src="/_Incapsula_Resource?CWUDNSAI=24&xinfo=10-123-0%200NNN%20RT'
        '&incident_id=1234000560123456789-123456789012345678&edet=12&cinfo=04000000" frameborder=0 '
        'width="100%" height="100%">Request unsuccessful. Incapsula incident ID: '
        "1234000560123456789-123456789012345678</iframe>",
    )
