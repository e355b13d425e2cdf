"""`pbem mail login`: the OAuth2 device authorization grant (RFC 8628).

pbem asks the provider's device endpoint for a code, shows the GM a URL and
the code, and polls the token endpoint at the interval the provider asked
for while the GM approves in any browser: ``authorization_pending`` means
wait, ``slow_down`` means wait 5 seconds longer from now on, and
``access_denied`` or ``expired_token`` end the login with words for the GM.
The refresh token that comes back is what pbem keeps (pbem/mail/oauth.py);
the access token is used at once and forgotten.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pbem.mail.errors import OAuthError
from pbem.mail.oauth import OAuthSettings, client_form, describe_error, post_form

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
_DEFAULT_INTERVAL = 5  # RFC 8628 section 3.2: when the server names none
_SLOW_DOWN_STEP = 5  # RFC 8628 section 3.5


@dataclass(frozen=True)
class DeviceCode:
    """What the GM is shown, and what pbem polls with."""

    device_code: str
    user_code: str
    verification_uri: str
    expires_in: float
    interval: float
    message: str = ""  # the provider's own sentence (Microsoft sends one)
    verification_uri_complete: str = ""  # the URL with the code in it, if given


@dataclass(frozen=True)
class LoginResult:
    refresh_token: str
    access_token: str
    polls: int


def start(settings: OAuthSettings) -> DeviceCode:
    """Ask the provider for a device code and a user code."""
    url = settings.endpoint("device_endpoint")
    form = client_form(settings)
    if settings.scope_list:
        form["scope"] = " ".join(settings.scope_list)
    answer = post_form(url, form)
    if "device_code" not in answer or "user_code" not in answer:
        raise OAuthError(
            f"the provider refused to start the login ({describe_error(answer)}). "
            "Check [mail.oauth2] client_id, tenant and scopes, and that the application "
            'allows public client flows (docs/GAME-MASTERS.md, "Mail providers")'
        )
    interval = answer.get("interval")
    return DeviceCode(
        device_code=str(answer["device_code"]),
        user_code=str(answer["user_code"]),
        # RFC 8628 says verification_uri; Google's older answers say verification_url
        verification_uri=str(answer.get("verification_uri") or answer.get("verification_url", "")),
        expires_in=float(answer.get("expires_in") or 900),
        interval=float(_DEFAULT_INTERVAL if interval is None else interval),
        message=str(answer.get("message", "")),
        verification_uri_complete=str(answer.get("verification_uri_complete", "")),
    )


def wait_for_approval(
    settings: OAuthSettings,
    code: DeviceCode,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> LoginResult:
    """Poll the token endpoint until the GM approved; OAuthError when they did not."""
    url = settings.endpoint("token_endpoint")
    form = {**client_form(settings), "grant_type": DEVICE_GRANT, "device_code": code.device_code}
    interval = code.interval
    deadline = clock() + code.expires_in
    polls = 0
    while True:
        sleep(interval)
        polls += 1
        answer = post_form(url, form)
        if "access_token" in answer:
            refresh = answer.get("refresh_token")
            if not isinstance(refresh, str) or not refresh:
                raise OAuthError(
                    "the provider gave no refresh token, so pbem could not log in again by "
                    "itself; the scopes need offline access (Microsoft: offline_access)"
                )
            return LoginResult(refresh, str(answer["access_token"]), polls)
        error = answer.get("error")
        if error == "authorization_pending":
            pass
        elif error == "slow_down":
            interval += _SLOW_DOWN_STEP
        elif error == "access_denied":
            raise OAuthError("the login was declined in the browser; nothing was stored")
        elif error == "expired_token":
            raise OAuthError(
                "the code expired before the login was approved; run `pbem mail login` again"
            )
        else:
            raise OAuthError(f"the provider refused the login ({describe_error(answer)})")
        if clock() >= deadline:
            raise OAuthError(
                "the code expired before the login was approved; run `pbem mail login` again"
            )
