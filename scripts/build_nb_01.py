"""Build notebooks/01_decode_phase.ipynb (run: python scripts/build_nb_01.py)."""

from nbbuild import build

cells = [
("md", r"""
# 01. 디코드 단계: 모델이 답을 한 토큰씩 만드는 구간

AI 모델이 답을 돌려줄 때 안에서는 성격이 다른 두 구간이 이어집니다. 이 노트북은 그중 **응답이 실제로 쓰이는 구간**,
**디코드 단계(decode phase)** 를 진짜 (작은) 한국어 모델로 직접 돌려 보며 익힙니다.

**이 노트북을 마치면**
1. 디코드 단계를 내 말로 한 문장에 설명할 수 있습니다.
2. 프롬프트를 읽는 구간(프리필)과 답을 쓰는 구간(디코드)을 나누어 말할 수 있습니다.
3. 이 구분이 언제 쓰이는지, 어떤 오해가 흔한지 가려낼 수 있습니다.

**미리 알 것**: AI 모델이 질문을 받아 답을 돌려준다는 것, 그리고 GPU 같은 계산용 프로세서가 그 계산을 한다는 것 정도면 충분합니다.
용어는 저장소의 `GLOSSARY.md`(용어집)를 따릅니다.
"""),
("code", r"""
import torch
import decodelab
from decodelab.models import bundled
from decodelab.widgets.decode import show_tokens, decode_explorer, distribution_figure, kv_cache_figure

torch.manual_seed(0)
pair = bundled()                      # 패키지에 들어 있는 모델 쌍: 인터넷 없이 로컬 폴더에서 읽습니다
model, tok = pair.target, pair.tokenizer
n_params = sum(p.numel() for p in model.parameters())
print(f"대상 모델(target model): 매개변수 {n_params / 1e6:.1f}M개, 층 {model.config.num_hidden_layers}개, 어휘 {len(tok)}개")
print("모델 카드:", pair.target_path.parent / "MODEL_CARD.md")
"""),
("md", r"""
## 한 문장으로 이해하기

> **디코드 단계는 모델이 응답을 한 번에 토큰 하나씩 만들어 이어 붙이는 구간입니다.**

여기서 **토큰(token)** 은 모델이 읽고 쓰는 글의 조각, 곧 응답이 만들어지는 단위입니다.
한국어에서는 음절 하나, 어절 일부, 조사 하나가 토큰이 되기도 합니다. 이 강좌의 모델이 문장을 어떻게 자르는지 봅시다.
"""),
("code", r"""
show_tokens(tok, "국회는 법률을 제정한다.")
"""),
("code", r"""
show_tokens(tok, "디코드 단계에서 응답은 한 토큰씩 만들어집니다.")
"""),
("md", r"""
자주 나온 말(이 모델은 헌법·법률안·LibreOffice 도움말·데비안 FAQ로 학습했습니다)은 토큰 하나로, 드문 말은 여러 토큰으로 쪼개집니다.
회색 상자는 한글 한 글자의 UTF-8 바이트 일부만 담은 토큰입니다: 토큰은 '글자'가 아니라 모델이 배운 조각입니다.

## 왜 필요한가

모델을 서비스하는 일은 한 덩어리가 아닙니다. 프롬프트를 읽는 구간과 답을 한 토큰씩 쓰는 구간은 계산의 성격이 달라서,
빠르게 하려면 다른 방법(때로는 다른 칩)이 필요합니다. Groq 같은 **저지연 칩(low-latency chip)** 이 겨냥하는 곳도 바로 디코드 구간입니다.
저지연이란 요청을 보내고 응답을 받기까지 기다림이 짧다는 뜻입니다.
답을 한 토큰씩 만들기 때문에, 토큰 하나에 드는 아주 작은 지연도 긴 답이나 여러 번 이어지는 작업에서는 쌓입니다(노트북 03).

## 어떻게 이루어지는가

1. **프리필(prefill)**: 프롬프트 전체를 한 번의 병렬 계산으로 읽습니다. 첫 번째 시드 글이 **맥락 처리** 라고 부른 구간이 이것입니다.
   이때 각 위치의 키·값(KV)이 **KV 캐시(KV cache)** 에 저장되고, 첫 새 토큰의 확률 분포가 나옵니다.
2. **디코드 단계**: 고른 토큰 하나를 다시 넣어 다음 토큰의 분포를 얻습니다. 이것을 토큰마다 반복합니다.
   한 단계마다 KV 캐시는 정확히 한 위치씩 늘어납니다.

`decodelab.prefill` 과 `decodelab.decode_step` 은 이 두 구간을 따로 부르는 함수입니다. 직접 여섯 단계를 돌려 봅시다.
"""),
("code", r"""
ids = tok("대한민국은", add_special_tokens=False)["input_ids"]
state = decodelab.prefill(model, torch.tensor([ids]))          # 1) 프리필: 프롬프트 전체를 한 번에
print(f"프롬프트 토큰 {len(ids)}개 → 프리필 후 KV 캐시 길이 {state.position}")
for step in range(6):
    next_id = int(state.logits.argmax())                         # 탐욕 디코딩: 가장 확률이 높은 토큰
    print(f"디코드 {step}: 위치 {state.position}에 토큰 {tok.decode([next_id])!r} (id {next_id})")
    state = decodelab.decode_step(model, state, next_id)         # 2) 토큰 하나를 넣고 다음 분포를 받음
print(f"디코드 6단계 후 KV 캐시 길이 {state.position}")
print("지금까지의 글:", tok.decode(state.input_ids[0]))
"""),
("md", r"""
## 라이브: 토큰이 하나씩 나타나는 모습

아래 위젯에서 **생성** 을 누르거나 슬라이더를 움직이면 모델이 실제로 토큰을 하나씩 만듭니다.
토큰에 마우스를 올리면 그 단계의 시간(ms, 이 컴퓨터에서 측정)과 위치가 보이고, 오른쪽 표는 방금 고른 토큰의 후보 다섯 개와 확률입니다.
모델이 너무 빨라서 눈으로 따라가기 어렵기 때문에 **표시 지연** 으로 화면만 느리게 할 수 있습니다(측정 시간에는 들어가지 않습니다).
첫 토큰(노란색)은 프리필이 만들고, 나머지(파란색)는 디코드 단계가 하나씩 만듭니다.
"""),
("code", r"""
decode_explorer(pair, prompt="셀 서식을 바꾸려면", max_new_tokens=30)
"""),
("md", r"""
## 다음 토큰을 고르는 방법: 탐욕 디코딩과 샘플링

모델은 매 단계 어휘 전체(여기서는 4,096개)에 대한 점수, **로짓(logits)** 을 냅니다. 여기서 토큰 하나를 고르는 규칙은 여러 가지입니다.

- **탐욕 디코딩(greedy decoding)**: 가장 확률이 높은 토큰을 고릅니다(온도 0). 같은 프롬프트에는 늘 같은 답이 나옵니다.
- **온도(temperature)**: 로짓을 온도로 나눈 뒤 확률로 바꿉니다. 1보다 작으면 분포가 뾰족해지고, 크면 평평해집니다.
- **top-k**: 확률이 높은 k개만 남기고 나머지는 버립니다.
- **top-p (nucleus)**: 확률이 높은 순서로 더해 p에 이를 때까지의 토큰만 남깁니다.

순서와 세부 규칙은 Hugging Face transformers의 로짓 변환기(`TemperatureLogitsWarper` → `TopKLogitsWarper` → `TopPLogitsWarper`)와 같습니다.
decodelab은 그 구현을 그대로 불러 쓰고, 테스트가 2만 번 뽑은 빈도를 정확한 분포와 비교해 확인합니다.
"""),
("code", r"""
prompt_ids = tok("문서를 저장하려면", add_special_tokens=False)["input_ids"]
logits = decodelab.prefill(model, torch.tensor([prompt_ids])).logits
fig = distribution_figure(logits, tok, [dict(temperature=1.0), dict(temperature=0.5), dict(temperature=1.5),
                                         dict(temperature=1.0, top_k=5), dict(temperature=1.0, top_p=0.5)])
"""),
("code", r"""
for seed in (0, 1, 2):
    r = decodelab.generate(model, tok, "문서를 저장하려면", 20, temperature=0.9, top_p=0.9, seed=seed)
    print(f"시드 {seed}: {r.text!r}")
greedy = decodelab.generate(model, tok, "문서를 저장하려면", 20)
print(f"탐욕  : {greedy.text!r}")
"""),
("md", r"""
같은 시드(seed)는 같은 결과를, 다른 시드는 다른 결과를 냅니다. 탐욕 디코딩에는 운이 없습니다.

## KV 캐시: 이미 계산한 것은 다시 계산하지 않는다

KV 캐시가 없으면 디코드 단계마다 지금까지의 모든 토큰을 처음부터 다시 계산해야 합니다. 그래서 글이 길어질수록 한 단계가 점점 느려집니다.
KV 캐시가 있으면 새 토큰 하나만 계산하고 앞의 키·값은 캐시에서 읽습니다. 두 방법이 **같은 토큰** 을 만드는지, 시간은 어떻게 다른지 재 봅시다.
"""),
("code", r"""
kw = dict(stop_at_eos=False, top_candidates=0)
decodelab.generate(model, tok, "모든 국민은", 8, **kw)                  # 준비 운동(첫 호출의 초기화 비용 제외)
with_cache = decodelab.generate(model, tok, "모든 국민은", 64, use_cache=True, **kw)
without_cache = decodelab.generate(model, tok, "모든 국민은", 64, use_cache=False, **kw)
print("두 방법의 토큰이 같은가:", with_cache.token_ids == without_cache.token_ids)
fig = kv_cache_figure(with_cache, without_cache)
"""),
("code", r"""
import statistics as st
for name, r in (("KV 캐시 사용", with_cache), ("KV 캐시 없음", without_cache)):
    ms = [s.ms for s in r.steps[1:]]
    print(f"{name}: 처음 10단계 중앙값 {st.median(ms[:10]):.2f} ms → 마지막 10단계 중앙값 {st.median(ms[-10:]):.2f} ms")
"""),
("md", r"""
(시간은 이 컴퓨터에서 잰 값이라 실행할 때마다 조금씩 다릅니다.) 캐시가 없으면 위치가 뒤로 갈수록 단계 시간이 늘어나고,
캐시가 있으면 거의 평평합니다. 다만 이 모델은 아주 작아서, 캐시가 있을 때의 시간은 계산보다 파이썬·라이브러리의 호출당 부담이 대부분입니다.
실제 큰 모델에서 디코드 한 단계가 왜 **메모리 대역폭** 에 묶이는지는 노트북 02에서 봅니다.

## 하나의 예시로 따라가기 (가상의 예)

개발자가 코딩 도우미에게 "이 함수의 버그를 찾아 줘"라고 부탁합니다.

1. 도우미 모델이 질문과 코드를 읽습니다: **프리필(맥락 처리)**.
2. 답을 한 토큰씩 씁니다: **디코드 단계**.
3. 한 번으로 끝나지 않습니다. 코드를 읽는 도구를 부르고, 결과를 받아 다시 답을 쓰고, 또 다른 도구를 부릅니다.
   이렇게 모델 호출과 도구 호출이 길게 반복되면, 토큰 하나에 드는 작은 지연이 반복마다 쌓여 사용자가 느끼는 기다림이 됩니다.

방금 잰 토큰당 시간으로 간단히 계산해 봅시다. (호출 수와 토큰 수는 설명을 위한 **가정** 입니다.)
"""),
("code", r"""
calls, tokens_per_call = 50, 300                     # 가정: 도구 호출 50번, 호출마다 300토큰 출력
per_call_s = tokens_per_call * with_cache.tpot_ms / 1000
print(f"이 컴퓨터의 토큰당 출력 시간(TPOT) {with_cache.tpot_ms:.2f} ms (측정)")
print(f"→ 호출 한 번의 디코드 {per_call_s:.2f} 초, {calls}번이면 {calls * per_call_s:.1f} 초")
print(f"→ 토큰마다 10 ms가 더 걸린다면 {calls * tokens_per_call * 10 / 1000:.0f} 초가 더 걸립니다")
"""),
("md", r"""
## 언제 쓰고 언제 쓰지 않는가

- 프리필/디코드의 구분은 **모델이 사용자에게 답을 내주는 서비스(추론)** 과정을 설명할 때 쓰는 말입니다. 학습 과정을 설명하는 말이 아닙니다.
- **흔한 오해**: 디코드를 빠르게 하는 저지연 칩이 GPU를 대신한다는 생각. GPU는 학습과 추론 양쪽에 쓰이고 새로운 기법과 모델에도 맞춰 쓸 수 있습니다.
  디코드 가속은 추론의 한 부분을 빠르게 할 뿐, 추론 전체나 학습을 대신하지 않습니다.
- **적용 조건**: 두 구간을 서로 다른 칩에 나누어 맡기는 것은 엔비디아가 설명한 구성처럼 **특정한 시스템** 의 이야기입니다.
  모든 서비스가 그렇게 나뉘어 있다고 여기면 안 됩니다(노트북 05).

## 핵심 정리

- 디코드 단계 = 응답을 한 번에 토큰 하나씩 만드는 구간. 그 앞에 프롬프트를 한 번에 읽는 프리필(맥락 처리)이 있습니다.
- 다음 토큰은 확률 분포에서 고릅니다: 탐욕(온도 0) 또는 온도·top-k·top-p를 건 샘플링.
- KV 캐시 덕분에 디코드 한 단계는 새 토큰 하나만 계산합니다. 결과는 캐시가 없을 때와 같고, 시간만 줄어듭니다.
- 토큰당 작은 지연도 긴 답과 에이전트의 반복 호출에서 쌓여 응답성을 좌우합니다.

## 확인 문제
답을 고르거나 입력하면 바로 채점되고 해설이 나옵니다. 답은 이 컴퓨터에 저장되어 커널을 다시 시작해도 남습니다.
"""),
("code", r"""
from decodelab.quiz import quiz_widget
quiz_widget("01")
"""),
]

if __name__ == "__main__":
    build("01_decode_phase.ipynb", cells)
