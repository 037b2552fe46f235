"""Build notebooks/03_agent_loops.ipynb (run: python scripts/build_nb_03.py)."""

from nbbuild import build

cells = [
("md", r"""
# 03. 에이전트 루프: 토큰당 몇 ms가 몇 분이 되는 곳

첫 번째 시드 글은 엔비디아의 설명을 빌려, **AI 에이전트(AI agent)** 가 도구 및 다른 시스템과 주고받으며 응답을 한 토큰씩 만들기 때문에
작은 지연이 복잡한 작업 흐름에서 누적될 수 있다고 말합니다. CNBC 보도도 에이전트가 사용자에게 빨리 반응하려면 낮은 지연의 추론이
중요하다고 전했고, 특히 관련 깊은 일로 코딩을 꼽았습니다. 이 노트북은 그 "누적"을 직접 계산하고 슬라이더로 움직여 봅니다.

**이 노트북을 마치면**
1. 에이전트 루프 한 바퀴를 프리필, 디코드, 도구 호출로 나누어 설명할 수 있습니다.
2. 토큰당 10 ms의 차이가 과제 하나에서 몇 분이 되는지 계산할 수 있습니다.
3. 더 빠른 디코드 칩, 투기적 디코딩, 호출 줄이기, 빠른 도구 중 **무엇이 언제** 도움이 되는지 암달의 법칙으로 가려낼 수 있습니다.

**용어** (`GLOSSARY.md`): 에이전트 루프(agent loop) — 모델 호출과 도구 호출의 반복. 도구 호출(tool call), 프리필(prefill, 시드 글의 "맥락 처리"),
디코드 단계(decode phase), 토큰당 출력 시간(TPOT), 투기적 디코딩(speculative decoding), 수락률(acceptance rate).

**출처 표기**: 수치는 저장소의 `facts/hardware.md`와 `facts/speculative.md`(각 행에 원출처가 있습니다)의 행을 따릅니다.
에이전트 루프에 대한 공개 수치는 많지 않습니다. 그래서 슬라이더 값 대부분은 **가정** 이고, 그럴 때는 가정이라고 적습니다.
"""),
("code", r"""
from decodelab import latency as lat
from decodelab.widgets.latency import latency_explorer, plot_agent_loop
"""),
("md", r"""
## 한 문장으로 이해하기

> **에이전트 루프에서는 모델 호출과 도구 호출이 수십 번 반복되므로, 토큰 하나에 붙은 작은 지연이 (호출 수 × 호출당 토큰 수)만큼 곱해져
> 과제 전체의 기다림이 됩니다.**

## 왜 필요한가

사람과 한 번 묻고 답하는 채팅에서 토큰당 20 ms와 30 ms의 차이는 잘 느껴지지 않습니다. 하지만 에이전트는 한 과제를 끝내려고 모델을 여러 번 부릅니다.
facts/hardware.md("Agent loops")에 모인 공개 수치는 이렇습니다.

- SWE-Bench Pro에서 SWE-agent가 과제 하나에 쓴 단계 수의 중앙값: 모델에 따라 29~78단계.
- SWE-bench Verified에서 CLI 에이전트들이 과제 하나에 쓴 실제 시간: 약 136~543초.

한 단계마다 모델이 수백 토큰을 쓰면, 토큰당 지연이 곧 분 단위의 차이가 됩니다.

## 어떻게 이루어지는가

에이전트 루프의 한 바퀴(모델 호출 하나)는 세 조각입니다.

1. **프리필**: 지금까지의 문맥(질문, 코드, 앞선 도구 결과)을 읽습니다. 문맥은 바퀴마다 늘어납니다. 이미 읽은 앞부분을 KV 캐시로 재사용하면
   (접두사 캐시, prefix caching) 새로 붙은 토큰만 읽으면 됩니다.
2. **디코드**: 답이나 다음 도구 호출 명령을 n 토큰 씁니다. 첫 토큰은 프리필이 내고, 나머지 n − 1 토큰은 토큰마다 TPOT가 걸립니다
   (전체 지연(E2E) = TTFT + (n − 1) × TPOT, facts/hardware.md "Serving metrics").
3. **도구 호출**: 파일 읽기, 테스트 실행 같은 일을 하고 결과를 문맥에 붙입니다.

facts/hardware.md의 예시를 계산해 봅시다: 50단계, 단계마다 출력 300 토큰, 도구 2초, 프리필은 무시.
손으로 하면 초당 50 토큰일 때 50 × (300 ÷ 50 + 2) = 400초, 초당 1,000 토큰일 때 50 × (0.3 + 2) = 115초입니다.
`lat.agent_loop` 은 각 호출의 첫 토큰을 프리필이 낸다고 보고 디코드를 299단계로 세므로 399초와 115초가 나옵니다.
"""),
("code", r"""
for tok_per_s in (50, 1000):
    r = lat.agent_loop(50, 300, tool_ms_per_call=2000, decode_ms_per_token=1000 / tok_per_s, prefill_tokens_per_s=1e4)
    t = r.totals
    print(f"초당 {tok_per_s:>5} 토큰: 총 {r.total_s:6.1f} 초 = 디코드 {t['decode'] / 1e3:6.1f} + 도구 {t['tool'] / 1e3:5.1f} 초")
print("[facts/hardware.md 'Agent loops': 50 steps x 300 tokens + 2 s tool: 400 s at 50 tok/s, 115 s at 1,000 tok/s]")
"""),
("md", r"""
디코드가 20배 빨라졌는데 전체는 3.5배만 빨라졌습니다. 빠른 쪽(1,000 토큰/초)에서는 100초의 도구 시간이 전체의 대부분입니다. 이 현상은 아래에서
**암달의 법칙(Amdahl's law)** 으로 다시 봅니다.

## 하나의 예시로 따라가기: 코딩 도우미

시드 글의 가상 예시를 그대로 따라갑니다. 개발자가 코딩 도우미에게 함수의 문제를 찾아 달라고 부탁합니다.

1. 모델이 질문과 함수 코드를 읽습니다(**프리필**).
2. 응답을 한 토큰씩 씁니다(**디코드 단계**). "이 함수가 부르는 파일을 읽어 보겠습니다" 같은 말과 도구 호출 명령입니다.
3. 코드를 읽는 **도구** 를 부르고, 결과를 받아 다시 프리필 → 디코드 → 또 다른 도구(예: 테스트 실행) … 를 반복합니다.

먼저 세 바퀴만 표로 봅시다. 모델은 Llama-3-70B(FP8), 하드웨어는 H100 한 장의 루프라인 값입니다(facts/hardware.md의 H100 행).
처음 문맥 4,000 토큰, 바퀴마다 문맥 +1,000 토큰(도구 결과), 출력 300 토큰, 도구 2초는 **가정** 입니다.
"""),
("code", r"""
m = lat.get_model("Llama-3-70B", "fp8")
r3 = lat.agent_loop(3, 300, tool_ms_per_call=2000, model=m, hardware="H100",
                    initial_context_tokens=4000, context_growth_per_call=1000)
print(f"{'호출':>4} {'문맥':>6} {'새로 읽은 토큰':>12} {'프리필':>8} {'디코드':>8} {'도구':>7}   (초)")
for i in range(r3.depth):
    print(f"{i + 1:>4} {r3.context_tokens[i]:>6.0f} {r3.prefill_tokens[i]:>12.0f} {r3.prefill_ms[i] / 1e3:>8.2f} "
          f"{r3.decode_ms[i] / 1e3:>8.2f} {r3.tool_ms[i] / 1e3:>7.2f}")
print(f"TPOT(루프라인, H100): {r3.tpot_ms[0]:.1f} ms/토큰 → 호출당 디코드 299 × {r3.tpot_ms[0]:.1f} ms")
"""),
("md", r"""
호출마다 디코드(299토큰 × TPOT, 6초 남짓)가 프리필(1초 미만)보다 훨씬 깁니다. 출력이 긴 에이전트에서는 디코드 단계가 지연의 주인공입니다.

### 라이브 시뮬레이션

아래 위젯에서 하드웨어 프리셋을 고르면 디코드 지연과 프리필 처리량이 그 칩의 값으로 바뀝니다(출처는 위젯 아래에 표시됩니다).
슬라이더를 직접 움직이면 "직접 설정"이 됩니다. 막대 하나가 모델 호출 하나입니다: 파랑 = 프리필, 주황 = 디코드, 초록 = 도구.

- GPU와 Trainium 프리셋: Llama-3-70B FP8, 문맥 8k, 칩 한 장의 **루프라인 값** (이론 하한).
- "Rubin + Groq 3 LPX": 엔비디아가 말한 "사용자당 초당 1,000 토큰에 가까운 생성 속도"라는 **주장** 을 1 ms/토큰으로 옮긴 것
  (facts/hardware.md "The NVIDIA + Groq 3 LPX configuration": "generation speeds approach 1,000 tokens per second per user").
- "Groq LPU v1": 2024년 GroqCloud에서 Llama-2-70B가 낸 초당 약 300 토큰(facts/hardware.md).
"""),
("code", r"""
latency_explorer()
"""),
("md", r"""
### 토큰당 +10 ms는 과제 하나에서 얼마인가

토큰당 지연이 10 ms 늘면, 과제 하나는 (호출 수 × 호출당 디코드 단계 수 × 10 ms)만큼 길어집니다. 단계 수는 SWE-agent의 중앙값 범위(29~78단계)를,
호출당 출력은 300 토큰(facts/hardware.md 예시)을 씁니다.
"""),
("code", r"""
for depth in (29, 50, 78):
    base = lat.agent_loop(depth, 300, 2000, decode_ms_per_token=20.0, prefill_tokens_per_s=1e4)
    slow = lat.agent_loop(depth, 300, 2000, decode_ms_per_token=30.0, prefill_tokens_per_s=1e4)
    extra = slow.total_s - base.total_s
    print(f"{depth:>2}단계: 토큰당 20 → 30 ms이면 {base.total_s:5.0f} → {slow.total_s:5.0f} 초 (+{extra:4.0f} 초 = +{extra / 60:.1f} 분)")
print("[단계 수: facts/hardware.md 'SWE-Bench Pro ... median 29-78 steps'; 300 토큰·도구 2초: 같은 파일의 예시, 20 ms 기준은 가정]")
"""),
("md", r"""
개발자 한 명이 하루에 과제를 여러 번 맡기고, 서비스는 수많은 개발자를 받습니다. 토큰당 10 ms는 "눈에 안 보이는 차이"가 아니라 과제마다 분 단위의 차이입니다.
엔비디아가 디코드 지연을 성능 과제로 지목한 맥락이 여기에 있습니다.

## 어떤 레버가 언제 도움이 되나: 암달의 법칙

과제 시간 중 비율 f인 부분을 s배 빠르게 하면 전체는 1 / ((1 − f) + f / s)배 빨라집니다(Amdahl, AFIPS 1967).
s를 아무리 키워도 1 / (1 − f)를 넘지 못합니다. 네 가지 레버를 같은 과제(50단계, 300 토큰, 도구 2초, H100 루프라인에서 출발)에 걸어 봅시다.

- **더 빠른 디코드 칩**: Rubin 한 장의 루프라인(facts/hardware.md Rubin 행: 22 TB/s), 또는 Rubin + Groq 3 LPX의 주장값 1 ms/토큰.
- **투기적 디코딩**: 수락률 α = 0.75, 초안 토큰 γ = 7, 초안/대상 비용 비 c = 0.02. Leviathan et al. 2023이 속도 향상을
  예측 3.2배, 측정 3.4배로 보고한 설정입니다(facts/speculative.md "Published speedups": α = 0.75, γ = 7, c ≈ 0.02;
  속도 향상 공식은 같은 파일의 "Walltime speedup"). TTFT는 그대로입니다.
- **호출 줄이기**: 같은 일을 25번 호출로(가정).
- **빠른 도구**: 도구 2초 → 0.5초(가정).
"""),
("code", r"""
presets = {p.label: p for p in lat.rate_presets(m)}
h100 = presets["H100 SXM (루프라인)"]
common = dict(prefill_tokens_per_s=h100.prefill_tokens_per_s, initial_context_tokens=4000, context_growth_per_call=1000)
spec = lat.SpeculativeConfig(alpha=0.75, gamma=7, c=0.02)   # Leviathan et al. 2023 (facts/speculative.md)
runs = {
    "기준: H100 (루프라인)": lat.agent_loop(50, 300, 2000, decode_ms_per_token=h100.decode_ms_per_token, **common),
    "디코드 칩: Rubin (루프라인)": lat.agent_loop(50, 300, 2000, decode_ms_per_token=presets["Rubin (루프라인)"].decode_ms_per_token, **common),
    "디코드 칩: Rubin+LPX (주장 1 ms)": lat.agent_loop(50, 300, 2000, decode_ms_per_token=1.0, **common),
    f"투기적 디코딩 (×{spec.speedup:.2f})": lat.agent_loop(50, 300, 2000, decode_ms_per_token=h100.decode_ms_per_token, speculative=spec, **common),
    "호출 50 → 25번": lat.agent_loop(25, 300, 2000, decode_ms_per_token=h100.decode_ms_per_token, **common),
    "도구 2 → 0.5초": lat.agent_loop(50, 300, 500, decode_ms_per_token=h100.decode_ms_per_token, **common),
}
base = runs["기준: H100 (루프라인)"].total_ms
for name, r in runs.items():
    t = r.totals
    print(f"{name:32s} 총 {r.total_s:6.1f} 초 (디코드 {t['decode'] / 1e3:6.1f}, 도구 {t['tool'] / 1e3:5.1f}, 프리필 {t['prefill'] / 1e3:4.1f})  ×{base / r.total_ms:.2f}")
f = runs["기준: H100 (루프라인)"].totals["decode"] / base
print(f"\n기준에서 디코드 비율 f = {f:.0%} → 디코드를 무한히 빠르게 해도 최대 ×{lat.amdahl_speedup(f, float('inf')):.2f}")
"""),
("code", r"""
fig = plot_agent_loop(runs["디코드 칩: Rubin+LPX (주장 1 ms)"], title="디코드가 1 ms/토큰이면 남는 것은 대부분 도구 시간")
"""),
("md", r"""
읽는 법:

- 기준에서는 디코드가 대부분이라 **디코드를 줄이는 레버**(빠른 칩, 투기적 디코딩)가 잘 듣습니다.
- 디코드가 충분히 빨라지면 남는 것은 도구 시간입니다. 그때부터는 칩을 더 빠르게 해도 거의 줄지 않고, **도구를 빠르게 하거나 호출 수를 줄이는 것** 이 효과적입니다.
- **호출 줄이기** 는 프리필, 디코드, 도구를 모두 줄이므로 언제나 듣습니다. 다만 같은 일을 더 적은 호출로 해낼 수 있어야 합니다.
- 투기적 디코딩의 효과는 수락률에 달려 있습니다. AWS는 Trainium에서 토큰 간 지연(ITL)이 최대 3배 줄었지만 자유로운 글쓰기에서는 이득이 작았다고 보고했습니다
  (facts/hardware.md "Speculative decoding on AWS Trainium"). 위젯에서 α를 내려 보세요. 다음 노트북(04)에서 직접 다룹니다.

## 언제 쓰고 언제 쓰지 않는가

- **이 계산이 맞는 곳**: 도구를 여러 번 부르며 긴 출력을 쓰는 대화형 에이전트(코딩 도우미 등). 사용자가 과제가 끝나기를 기다리는 상황입니다.
- **덜 맞는 곳**: 한 번 묻고 짧게 답하는 경우(디코드 몇십 토큰보다 TTFT가 큼), 밤새 돌리는 일괄 처리(지연보다 처리량이 중요),
  도구가 오래 걸리는 루프(테스트 전체 실행, 웹 검색: 도구 시간이 지배).
- **주의**: 에이전트 루프의 공개 수치는 얇습니다. 단계 수와 과제당 시간 외의 값(문맥 증가량, 도구 시간, 호출당 토큰 수)은 이 노트북의 **가정** 이고,
  실제 값은 과제와 에이전트마다 크게 다릅니다. 또 여기의 칩 속도는 루프라인 하한이거나 회사의 주장입니다.

## 핵심 정리

- 에이전트 루프의 한 바퀴 = 프리필(늘어나는 문맥) + 디코드((n − 1) × TPOT) + 도구 호출.
- 토큰당 지연은 호출 수 × 호출당 토큰 수만큼 곱해집니다: 50단계 × 300 토큰이면 토큰당 +10 ms가 약 +2.5분입니다.
- 어떤 레버가 듣는지는 **지금 무엇이 시간을 차지하는지** 에 달려 있습니다(암달의 법칙). 디코드가 크면 빠른 디코드 칩과 투기적 디코딩,
  도구가 크면 빠른 도구, 호출 줄이기는 언제나.

## 확인 문제
답을 고르거나 입력하면 바로 채점되고 해설이 나옵니다.
"""),
("code", r"""
from decodelab.quiz import quiz_widget
quiz_widget("03")
"""),
]

if __name__ == "__main__":
    build("03_agent_loops.ipynb", cells)
