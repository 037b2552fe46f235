"""The one argument checker (decodelab._check): its rule, its types and its one message shape."""

from __future__ import annotations

import numpy as np
import pytest

from decodelab._check import check, check_gamma, fail


def test_message_shape_rule_and_hint():
    with pytest.raises(ValueError) as e:
        check_gamma(0, name="num_speculative_tokens")
    assert str(e.value) == ("num_speculative_tokens=0: 초안 토큰 수(gamma, num_speculative_tokens)에 맞지 않는 값입니다 "
                            "(허용: 1 이상의 정수; 예: 4)")
    with pytest.raises(ValueError, match=r"^top_p=1\.5: top_p에 맞지 않는 값입니다 \(허용: 0보다 크고 1 이하인 유한한 수\)$"):
        check("top_p", 1.5, "top_p", strict=True, high=1)
    err = fail("draft", "medusa", "알 수 없는 초안 이름입니다", "'ngram'", TypeError)
    assert isinstance(err, TypeError) and str(err) == "draft='medusa': 알 수 없는 초안 이름입니다 (허용: 'ngram')"


@pytest.mark.parametrize("value, kind", [("4", TypeError), (None, TypeError), (True, TypeError), ([4], TypeError),
                                         (2.5, ValueError), (0, ValueError), (float("nan"), ValueError),
                                         (10**400, ValueError)])
def test_wrong_type_is_type_error_wrong_value_is_value_error(value, kind):
    with pytest.raises(kind, match=r"^n=.*: .*\(허용: 1 이상의 정수\)$"):
        check("n", value, "개수", low=1, integer=True)


def test_whole_numbers_come_back_as_ints_exactly():
    assert check("n", 4.0, "개수", integer=True) == 4 and type(check("n", 4.0, "개수", integer=True)) is int
    assert check("seed", 2**70 + 1, "seed", integer=True) == 2**70 + 1  # not rounded through a float
    assert check("n", np.int64(3), "개수", integer=True) == 3
    np.testing.assert_array_equal(check("g", [1, 2, 3], "개수", low=1, integer=True, array=True), [1.0, 2.0, 3.0])
