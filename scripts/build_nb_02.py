"""Build notebooks/02_prefill_vs_decode.ipynb (run: python scripts/build_nb_02.py)."""

from nbbuild import build

cells = [
("md", r"""
# 02. 프리필과 디코드 단계: 같은 모델, 서로 다른 병목

첫 번째 시드 글은 모델을 서비스하는 과정이 한 덩어리가 아니라고 말합니다. 먼저 맥락을 처리하고, 그다음 응답을 한 토큰씩 만듭니다.
이 노트북은 두 구간이 **왜 서로 다른 이유로 느린지** 를 계산으로 따져 보고, 이 컴퓨터에서 진짜 모델로 재어 봅니다.

**이 노트북을 마치면**
1. 프리필은 연산 능력이, 디코드는 메모리 대역폭이 속도를 정하는 이유를 숫자로 설명할 수 있습니다.
2. 첫 토큰까지의 시간과 토큰당 출력 시간을 구분하고, 각각을 무엇이 정하는지 말할 수 있습니다.
3. 계산으로 낸 예측과 실제 측정이 어디서, 왜 다른지 설명할 수 있습니다.

**용어** (`GLOSSARY.md`): 프리필(prefill) — 시드 글이 "맥락 처리"라고 부른 구간입니다. 이후로는 "프리필"이라고만 씁니다.
디코드 단계(decode phase), KV 캐시(KV cache), 첫 토큰까지의 시간(TTFT), 토큰당 출력 시간(TPOT),
메모리 대역폭(memory bandwidth), 연산 한계(compute-bound), 메모리 한계(memory-bound), 산술 강도(arithmetic intensity),
리지 포인트(ridge point), 루프라인(roofline).

**출처 표기**: 칩과 공식의 수치는 저장소의 사실 파일 `facts/hardware.md`(각 행에 원출처가 있습니다)의 행을 따르고,
모델 크기는 각 모델이 공개한 `config.json`을 따릅니다. 이 컴퓨터에서 잰 값은 "이 컴퓨터에서 측정"이라고 적습니다.
"""),
("code", r"""
import numpy as np
from decodelab import latency as lat
from decodelab.widgets.latency import plot_roofline, plot_measured_vs_roofline

BOUND = {"memory": "메모리 한계", "compute": "연산 한계"}
"""),
("md", r"""
## 한 문장으로 이해하기

> **프리필은 프롬프트 전체를 한 번에 계산하므로 칩의 연산 속도가, 디코드 단계는 토큰 하나를 낼 때마다 모든 가중치와 KV 캐시를
> 메모리에서 다시 읽어야 하므로 메모리 대역폭이 시간을 정합니다.**

## 왜 필요한가

사용자가 느끼는 기다림, 곧 지연(latency)은 두 숫자로 나뉩니다(정의: facts/hardware.md "Serving metrics", vLLM 벤치마크의 정의).

- **첫 토큰까지의 시간(TTFT)**: 요청을 보낸 때부터 첫 토큰이 올 때까지. 대기 + 프리필(+ 네트워크).
- **토큰당 출력 시간(TPOT)**: (전체 지연(E2E) − TTFT) / (출력 토큰 수 − 1). 디코드 한 단계의 평균 시간입니다.
- 함께 쓰는 말로 **토큰 간 지연(ITL)** 은 스트리밍으로 도착하는 연속된 두 토큰(묶음) 사이의 간격 하나하나입니다.
  투기적 디코딩에서는 한 묶음에 여러 토큰이 실려 올 수 있습니다(노트북 04).

긴 문서를 넣으면 TTFT가, 긴 답을 받으면 TPOT가 체감 지연을 좌우합니다. 둘을 줄이는 방법이 다르기 때문에
(노트북 05에서 보듯 때로는 칩까지 다르게 씁니다) 무엇이 각각을 정하는지 알아야 합니다.

## 어떻게 이루어지는가: 바이트와 FLOP를 세기

계산 한 번의 시간은 대략 두 값 중 큰 쪽입니다(루프라인 모형: Williams et al., CACM 2009; 공식은 facts/hardware.md
"The back-of-envelope model", kipp.ly의 *Transformer Inference Arithmetic*).

- 메모리에서 읽어야 하는 바이트 ÷ 메모리 대역폭
- 해야 하는 연산(FLOP) ÷ 초당 연산 능력(FLOP/s)

디코드 한 단계는 토큰 **하나** 를 만들기 위해 **모든** 가중치를 읽습니다(토큰당 가중치 하나에 곱셈·덧셈 한 번, 2 FLOP).
거기에 지금까지의 KV 캐시도 읽습니다. facts/hardware.md의 예시를 그대로 계산해 봅시다:
Llama-3-70B를 FP8(가중치 1바이트)로, H100 한 장에서, 문맥 8k(8,192) 토큰.
"""),
("code", r"""
m = lat.get_model("Llama-3-70B", "fp8")       # 공개 config.json: 80층, hidden 8192, KV 헤드 8개, 헤드 크기 128
h100 = lat.get_hardware("H100")                 # facts/hardware.md 'Chips' 표의 H100 SXM 행: 3.35 TB/s, FP8 1,979 TFLOP/s(dense)
kv = lat.kv_bytes_per_token(m)
step = lat.decode_step(m, h100, context_tokens=8192)
print(f"매개변수 {m.n_params / 1e9:.2f}B개 → FP8 가중치 {m.weight_bytes / 1e9:.1f} GB          [출처: Meta-Llama-3-70B config.json]")
print(f"KV 캐시: 토큰당 2 × 80층 × 8헤드 × 128 × 2바이트 = {kv / 1e6:.2f} MB, 8k 토큰이면 {8192 * kv / 1e9:.2f} GB  [facts/hardware.md 공식]")
print(f"디코드 한 단계: 메모리 {step.memory_ms:.1f} ms vs 연산 {step.compute_ms:.2f} ms → {step.ms:.1f} ms ({BOUND[step.bound]})")
print(f"→ 사용자 한 명에게 초당 최대 {1000 / step.ms:.0f} 토큰  [facts/hardware.md: '~22 ms per token (<= 46 tok/s)']")
"""),
("md", r"""
메모리에서 읽는 데 22 ms, 계산에는 0.1 ms도 안 걸립니다. 칩의 연산 장치는 대부분 **데이터가 오기를 기다립니다**. 이것이 "디코드는 메모리 한계"라는 말의 뜻입니다.

프리필은 반대입니다. 프롬프트의 8,192개 토큰이 **한 번** 읽은 가중치를 함께 씁니다. 연산량은 약 2 × 매개변수 × 토큰 수
(+ 어텐션 2 × 층 × 토큰² × hidden)입니다(facts/hardware.md "Prefill FLOPs").
"""),
("code", r"""
flops = lat.prefill_flops(m, 8192)
for mfu in (1.0, 0.5):
    t = lat.prefill_ms(m, h100, 8192, mfu=mfu)
    print(f"8k 토큰 프리필: {flops / 1e15:.2f} PFLOP ÷ (1,979 TFLOP/s × {mfu:.0%}) = {t / 1000:.2f} 초")
print("[facts/hardware.md: '~1.25 PFLOP: ~0.63 s on one H100 FP8 at 100% MFU, ~1.3 s at 50%']")
print(f"같은 토큰 8,192개를 디코드로 하나씩 만들면: 약 {8192 * step.ms / 1000:.0f} 초 (토큰마다 가중치를 다시 읽으므로)")
"""),
("md", r"""
MFU(model FLOP utilization)는 칩의 최대 연산 능력 중 실제로 쓰는 비율입니다. 100%는 도달할 수 없는 이론값이라 루프라인은 **하한** 입니다.

### 산술 강도와 리지 포인트

**산술 강도(arithmetic intensity)** 는 메모리에서 읽은 1바이트당 연산 수(FLOP/byte)입니다.
칩의 **리지 포인트(ridge point)** = 최대 FLOP/s ÷ 메모리 대역폭. 산술 강도가 이보다 낮으면 메모리 한계, 높으면 연산 한계입니다.
배치 1 디코드의 가중치 곱셈은 가중치 1개(BF16이면 2바이트)를 읽어 2 FLOP를 하므로 산술 강도가 약 2 ÷ 바이트 수, BF16에서 1입니다.
"""),
("code", r"""
print(f"배치 1 디코드(BF16)의 산술 강도: {lat.arithmetic_intensity(lat.get_model('Llama-3-70B', 'bf16')):.2f} FLOP/byte")
for name in ("H100", "H200", "B200", "Rubin", "Trainium2", "Trainium3"):
    hw = lat.get_hardware(name)
    note = "  ※ 가정: Rubin의 dense FLOP/s는 공개되지 않음" if hw.notes else ""
    print(f"{hw.name:10s} 리지 포인트(BF16) {hw.ridge_point('bf16'):6.0f} FLOP/byte   [{hw.source}]{note}")
print("[facts/hardware.md: 'H100 BF16 ~ 295 FLOP/byte, H200 ~ 206']")
"""),
("md", r"""
1 FLOP/byte와 수백 FLOP/byte: 두 자릿수 넘게 차이 납니다. 아래 **루프라인(roofline)** 그림에서 비스듬한 선은 메모리 대역폭이 허락하는 성능,
평평한 선은 연산 능력의 천장입니다. 두 선이 만나는 점(●)이 리지 포인트입니다.
▲는 Llama-3-70B(BF16) 디코드 한 단계를 배치 크기별로 H100 위에 찍은 것입니다.
"""),
("code", r"""
fig = plot_roofline(("H100", "H200", "B200", "Trainium2"), "bf16", batches=(1, 8, 64, 256))
"""),
("md", r"""
### 배치 크기와 리지 포인트

여러 사용자의 요청을 한 번에 처리하면(배치 B) 한 번 읽은 가중치를 B번 씁니다: 가중치 곱셈의 산술 강도는 약 2B ÷ 바이트 수로 올라갑니다.
그래서 서버는 배치를 키워 처리량을 올립니다. 하지만 **KV 캐시는 사용자마다 따로** 라서 함께 쓸 수 없습니다.
facts/hardware.md는 "디코드 어텐션의 산술 강도는 배치와 상관없이 약 (쿼리 헤드 수 ÷ KV 헤드 수)이라 늘 메모리 한계"라고 적습니다.
Llama-3-8B(BF16, H100 한 장)로 확인해 봅시다.
"""),
("code", r"""
m8 = lat.get_model("Llama-3-8B", "bf16")        # 공개 config.json: 32층, KV 헤드 8개
print(f"{'배치':>5} {'문맥':>6} {'한 단계(ms)':>11} {'전체 토큰/초':>12} {'한계':>8} {'메모리에 들어가나':>10}")
for B in (1, 8, 64, 256, 512):
    for S in (0, 1024):
        e = lat.decode_step(m8, "H100", S, B)
        print(f"{B:>5} {S:>6} {e.ms:>11.2f} {B * 1000 / e.ms:>12,.0f} {BOUND[e.bound]:>8} {'예' if e.fits else '아니오':>10}")
print(f"H100 BF16 리지 포인트 = {lat.ridge_point('H100'):.0f}: 문맥이 비어 있으면 배치 약 300부터 연산 한계  [facts/hardware.md, 루프라인 계산]")
"""),
("md", r"""
읽는 법:

- 문맥이 없으면(문맥 0) 배치를 1에서 256으로 늘려도 한 단계 시간은 그대로이고, 전체 처리량(throughput)은 256배가 됩니다. 배치가 리지 포인트를 넘는 512에서야 연산 한계가 됩니다.
- 문맥이 1,024 토큰이면 배치가 커질수록 사용자별 KV 캐시를 읽는 시간이 커져 한 단계가 느려지고, 연산 한계에 닿기 전에 메모리 용량이 먼저 모자랍니다.
- 사용자 한 명이 느끼는 TPOT는 배치가 클수록 같거나 나빠집니다. **처리량과 지연은 서로 다른 목표** 입니다.

## 하나의 예시로 따라가기: 번들 모델로 직접 재기

이제 예측만 하지 말고 재어 봅시다. 이 강좌에 들어 있는 작은 대상 모델(target model)로 `decodelab.prefill` 과 `decodelab.decode_step` 을
직접 부르며 시간을 잽니다. 같은 모델을 루프라인 모형에 넣어 "이 컴퓨터" 예측도 냅니다. 이 컴퓨터의 메모리 대역폭과 연산 능력은
numpy로 지금 잽니다(큰 배열 복사, float32 행렬 곱: `lat.measure_this_computer`).
"""),
("code", r"""
import torch
from decodelab.models import bundled
from decodelab.latency_measure import measure_ttft, measure_tpot, fit_line

torch.manual_seed(0)
pair = bundled()
here = lat.get_hardware("this-computer")                 # 이 컴퓨터에서 측정
tm = lat.get_model("bundled-target", "fp32")             # 번들 모델의 config.json을 지금 읽음, CPU에서는 fp32
print(f"이 컴퓨터(측정): 메모리 대역폭 {here.bandwidth / 1e9:.1f} GB/s, float32 행렬 곱 {here.flops['fp32'] / 1e9:.0f} GFLOP/s")
print(f"번들 대상 모델: 매개변수 {tm.n_params / 1e6:.2f}M개 → fp32 가중치 {tm.weight_bytes / 1e6:.1f} MB, "
      f"KV 캐시 토큰당 {lat.kv_bytes_per_token(tm) / 1e3:.1f} KB  [config.json에서 계산]")
"""),
("code", r"""
ttft = measure_ttft(pair.target, pair.tokenizer, prompt_lengths=(8, 32, 64, 128, 256), repeats=5)
S = np.array(ttft["prompt_tokens"])
pred_ttft = lat.prefill_ms(tm, here, S)
a, b = fit_line(S, ttft["ttft_ms"])
for s, meas, pred in zip(S, ttft["ttft_ms"], pred_ttft):
    print(f"프롬프트 {s:>3} 토큰: 측정 {meas:7.2f} ms | 루프라인 예측 {pred:6.2f} ms")
print(f"직선 맞춤(측정): {a:.2f} ms + {b:.3f} ms/토큰  → 절편 {a:.2f} ms는 토큰 수와 상관없는 호출 한 번의 고정 비용")
fig = plot_measured_vs_roofline(S, ttft["ttft_ms"], pred_ttft, fit=(a, b), xlabel="프롬프트 길이 (토큰)",
                                title="프리필 시간(≈ TTFT): 이 컴퓨터에서 측정 vs 루프라인 예측")
"""),
("code", r"""
tpot = measure_tpot(pair.target, pair.tokenizer, output_lengths=(2, 16, 48, 96), prompt_tokens=32, repeats=2)
N = np.array(tpot["output_tokens"])
pred_tpot = np.array([lat.tpot_ms(tm, here, 32, int(n)) for n in N])
for n, meas, pred in zip(N, tpot["tpot_ms"], pred_tpot):
    print(f"출력 {n:>3} 토큰: TPOT 측정 {meas:6.2f} ms | 루프라인 예측 {pred:5.2f} ms | 측정 ÷ 예측 = {meas / pred:4.1f}배")
step_pred = lat.decode_step(tm, here, context_tokens=32)
print(f"루프라인 예측, 디코드 한 단계(문맥 32 토큰): {step_pred.ms:.2f} ms ({BOUND[step_pred.bound]}: "
      f"{step_pred.bytes / 1e6:.1f} MB ÷ {here.bandwidth / 1e9:.1f} GB/s)  [이 컴퓨터에서 측정한 대역폭 + config.json]")
fig = plot_measured_vs_roofline(N, tpot["tpot_ms"], pred_tpot, xlabel="출력 길이 (토큰)",
                                title="토큰당 출력 시간(TPOT): 이 컴퓨터에서 측정 vs 루프라인 예측")
"""),
("md", r"""
**왜 다를까?** 위 숫자는 실행할 때마다 조금씩 다르지만(이런 공유 컴퓨터에서는 실행마다 ±30% 정도:
`facts/tiny-model-feasibility.md` "Timings vary ~30% between runs"), 모양은 대개 이렇습니다.

1. **호출마다 붙는 고정 비용(per-call overhead)이 지배합니다.** 이 모델의 가중치는 수십 MB에 불과해서, 루프라인대로라면 디코드 한 단계는
   위 셀이 출력한 예측값(`lat.decode_step`, 이 컴퓨터에서 측정한 대역폭 기준)만큼이면 끝납니다. 하지만 한 번의 순전파(forward pass)는 수십 개의 작은 행렬 연산과 파이썬·PyTorch 함수 호출로 이루어지고,
   그 하나하나에 마이크로초 단위의 고정 비용이 붙습니다. 작은 모델에서는 이 비용이 실제 계산보다 큽니다.
   TTFT 직선의 절편(토큰 0개일 때의 시간)이 디코드 한 단계 시간과 비슷하게 나온다면, 둘 다 이 고정 비용이 대부분이라는 뜻입니다.
2. **캐시가 메모리를 가립니다.** 가중치가 CPU의 큰 캐시에 들어가면 메모리 대역폭 측정(128 MiB 복사)보다 빨리 읽힙니다.
   그래서 이 컴퓨터에서는 "메모리 한계"라는 말이 잘 맞지 않습니다.
3. **긴 프롬프트에서는 예측과 측정이 가까워집니다.** 토큰이 많아지면 실제 계산이 고정 비용을 덮고, 직선의 기울기(토큰당 ms)가
   루프라인이 말하는 연산 시간에 가까워집니다. 다만 작은 행렬 곱은 1024×1024 측정만큼 효율이 나오지 않습니다.

거대한 모델을 가속기에서 돌리면 사정이 바뀝니다. 70B 모델은 한 단계에 수십 GB를 읽어야 하고(위 계산 22 ms), 마이크로초 단위의 고정 비용은 묻힙니다.
루프라인이 쓸모 있는 곳은 바로 그런 곳입니다.

## 언제 쓰고 언제 쓰지 않는가

- **쓰는 곳**: 가중치가 칩의 캐시보다 훨씬 큰 모델의 추론(inference) 지연을 어림할 때, 칩을 고를 때("대역폭이 두 배면 TPOT가 절반"),
  배치 크기를 정할 때. 루프라인 값은 **도달할 수 없는 하한** 으로 읽습니다. 실제 시스템은 연산 효율 약 0.7, 메모리 효율 약 0.9 정도를
  가정하곤 합니다(facts/hardware.md "Simulators": llm-analysis의 제안값).
- **쓰지 않는 곳**: 작은 모델을 CPU에서 돌릴 때(위에서 본 고정 비용), 여러 칩에 나눈 모델에서 통신을 빼먹을 때
  (8장 텐서 병렬은 토큰마다 약 160번의 all-reduce가 더 붙습니다: facts/hardware.md), 요청 대기열과 배치 스케줄러가 지연을 정할 때.
- **흔한 오해**: "디코드는 언제나 메모리 한계"는 작은 배치에서의 이야기입니다. 가중치 곱셈은 배치가 리지 포인트만큼 커지면 연산 한계가 됩니다.
  다만 어텐션이 KV 캐시를 읽는 부분은 배치와 상관없이 메모리 한계로 남습니다.

## 핵심 정리

- 프리필: 프롬프트 전체를 한 번에, 가중치를 한 번 읽고 여러 토큰이 함께 씀 → 연산 한계. TTFT를 정합니다.
- 디코드 단계: 토큰마다 모든 가중치 + KV 캐시를 다시 읽음 → 메모리 한계. TPOT를 정합니다.
- 리지 포인트(최대 FLOP/s ÷ 대역폭)보다 산술 강도가 낮으면 메모리 한계입니다. 배치 1 디코드는 1~2 FLOP/byte, 칩의 리지 포인트는 수백입니다.
- 루프라인은 하한입니다. 작은 모델에서는 호출마다 붙는 고정 비용이 실제 시간을 정합니다.

## 확인 문제
답을 고르거나 입력하면 바로 채점되고 해설이 나옵니다.
"""),
("code", r"""
from decodelab.quiz import quiz_widget
quiz_widget("02")
"""),
]

if __name__ == "__main__":
    build("02_prefill_vs_decode.ipynb", cells)
