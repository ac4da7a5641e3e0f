"""API tokens over the API itself (a logged-in browser session or another token)."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from shareval.platform.accounts.models import ApiToken


def token_dict(t: ApiToken) -> dict:
    return {"id": t.pk, "name": t.name, "hint": t.hint, "created": t.created.isoformat(),
            "last_used": t.last_used.isoformat() if t.last_used else None,
            "revoked": t.revoked.isoformat() if t.revoked else None,
            "parent": t.parent_id}


class TokenList(APIView):
    permission_classes = [IsAuthenticated]

    def get(self, request):
        return Response([token_dict(t) for t in request.user.api_tokens.all()])

    def post(self, request):
        parent = request.auth if isinstance(request.auth, ApiToken) else None
        tok, key = ApiToken.issue(request.user, str(request.data.get("name", "token")), parent)
        return Response({**token_dict(tok), "key": key}, status=status.HTTP_201_CREATED)


class TokenDetail(APIView):
    permission_classes = [IsAuthenticated]

    def delete(self, request, pk):
        tok = get_object_or_404(ApiToken, pk=pk, user=request.user)
        tok.revoke()
        return Response(token_dict(tok))
