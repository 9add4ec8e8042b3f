"""The article's published v1 files (data/engram-eval-v1/results/ as released), by sha256.

`import-v1` labels a file that states no models with the paper stack only when its bytes are one of these: the
article states the stack its own files ran on. Any other file keeps the models it states (or none) on the
`imported` stack. Regenerate only for a new release: `cd data/engram-eval-v1 && sha256sum results/*.json`.
"""

from __future__ import annotations

ARTICLE_FILES = {
    "50665150e25a45869b73a5038643fcff0e2b3a6663ab99ac23c076a1cfcf6e46": "results/e2_jev__dev.json",
    "c3fde763ac7271a9e887e604c3eaa8ece4dc4ab9d283c8cb5e7d4f5e292a5244": "results/e2_jev_v2__dev_updates.json",
    "f0c60b399704eb02470466cfcc869502f6fcb400349e4e4e6d4effa819dbf6c0": "results/e2_jev_v2__dev_updates__k3.json",
    "1ce723a1198ed1531b0a69a33293ed80afd0dcad5f606f86afeacb88536ae34a": "results/e2_llm__dev.json",
    "9def9893c4ef229c62bf95876a88b790720c936b5e39f94cc4d3666f7d53dd30": "results/e3_structural_v2__dev_updates.json",
    "3abda52c18b8fbb006effb2ec47fff59a1824819747b127b513c7a1c9c4eba63": "results/e3_structural_v3__dev_updates.json",
    "9b3d9edf8d0c595ef749ce08c065299e5e9f5051354c059d163bcaee9d2b4c22": "results/e4_belief__dev_updates.json",
    "4a92093bc2f8dfa9354be106024d2b2dafe96a56a08cc77016c655f6f0a01adf": "results/e4_belief_v2__dev_updates__k3.json",
    "03bfcb65a99379ddb1cc32d58a0bbc27904680a7f96b0f7d6b44f9db21f32635": "results/e4_belief_v2__heldout_conv-30__k20.json",
    "698f0459e9a084b969adac5d4cd322812991ceeb556f8eac4cf6ac4a6a07dd42": "results/e4_belief_v2__heldout_conv-30__k3.json",
    "57cb29a14b961b15f46c131b09dad3000bc414cf1ba11bfffc7f43cdb820504a": "results/e4_belief_v2__heldout_conv-41__k20.json",
    "7d122c46b63e3f5cb5652fe3eb8f9a4a2b879dae5c07a338b59c7655ee03560e": "results/e4_belief_v2__heldout_conv-41__k3.json",
    "ee013eb3797f4a9ecca1b92d9fe54e35c5f58d974a1d3b8c54639d74db380a8b": "results/e4_belief_v2__heldout_conv-42__k20.json",
    "4388c94a8d3a3b41bbe18783dd6d07dd8399129caca35b09f62a78f4cb2ee2ad": "results/e4_belief_v2__heldout_conv-42__k3.json",
    "a74af1f1b68c59347dcefb6479ee9bfc77017ed3c8e73640403b35c71524d8ac": "results/e4_belief_v2__heldout_conv-43__k20.json",
    "52e390f1876a2efff6224d0bfc5dd86f31c59f2be6878ac24f372f088d3f5e1b": "results/e4_belief_v2__heldout_conv-43__k3.json",
    "028f5ecb4a27581407f0f5a2e30490d99e7019fa4cfda49666bec9a60f82b60c": "results/e4_belief_v2_laya__dev_updates__k3.json",
    "b3469ea41327291b3041d4b4b8e0d192aa337527f38f0d0c3547dc96cbd773e8": "results/e4_belief_v2_shadow__dev_updates2__k3.json",
    "126b64c6ede9cca011cd70b6c3c93eed1b9e71a9fd0e591b35053a95e9c02f7b": "results/e4_belief_v2_shadow__dev_updates__k3.json",
    "21e13d531b8242076a796292363e5b9b43bc617cbcf774f239aaf85d2adf5e0f": "results/mem0__dev.json",
    "e5d6b49678ea4181d60877d2421dbc1fb62e973237b6632d44ffb370961dbb48": "results/mem0__dev_updates.json",
    "4527a5b7036cf03e96b856f12ac8827e579537df5aeff0d4353b509079cb3060": "results/mem0__dev_updates2.json",
    "3d1d3e91433d1ae24bf40e290356d50a653744b70584e4bc21c0ceef047583f5": "results/mem0__dev_updates__k3.json",
    "de91c175925014a407d426510d4b67b1d567ef3d84b0af1de694b597abb5b177": "results/mem0__dev_updates__nodates.json",
    "72218838747544be988c57c58fb7ecab940a93f75a2795632bc0426b938b731f": "results/mem0__heldout_conv-30__k20.json",
    "9ebd528668da6dfc14eda514c7b463deb523840381fd47cd4784f8e63bca21ca": "results/mem0__heldout_conv-30__k3.json",
    "c0a3313d8725635412bc15f94018d13078ccfcec3b35b834e1481fe10c0d4e77": "results/mem0__heldout_conv-41__k20.json",
    "71bfa98b5987660f302f9bc543e32935f019c12a5fce06d2a5f4fdfa5dfa76ba": "results/mem0__heldout_conv-41__k3.json",
    "ea42f723b7c072bdbbf0c53f58d95604fc01f8692e33b584d2e6821dce9ba0a4": "results/mem0__heldout_conv-42__k20.json",
    "3c843ad7c5bf64dd926c872dbf6d0695b4782699d68cd03f7202a41d922b3a85": "results/mem0__heldout_conv-42__k3.json",
    "4c5ffb4694d68cd4b3ee2d89bdd81d2f2f28b1a6bb8953aaea6c0cf1acab2974": "results/mem0__heldout_conv-43__k20.json",
    "482ae4fb4231b673a17024de3052d2bf0e6497274ca7be780a68941566baac7b": "results/mem0__heldout_conv-43__k3.json",
    "12a9ee256daa697d24455f0a5408baf4fce117995cf098457db909efa1163f37": "results/mem0_token_matched__heldout_pooled__k6.json",
    "cf4c0836e2b580348df3df692a2118c4f6267cfc2804a9bba08fb5f5cdf2b967": "results/heldout_extra.json",
}
