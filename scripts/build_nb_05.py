"""Build notebooks/05_chips.ipynb (run: python scripts/build_nb_05.py)."""

from nbbuild import build

cells = [
("md", r"""
# 05. 칩 사이의 분업: 루빈 GPU와 Groq 3 LPX

첫 번째 시드 글은 엔비디아가 설명한 구성에서 **두 구간을 서로 다른 칩이 나눠 맡는다** 고 전합니다. 루빈(Rubin) GPU가 대규모 맥락 처리를,
Groq 3 LPX가 지연에 민감한 디코드 작업을 가속한다는 것입니다. 그리고 곧바로 두 가지를 못 박습니다.
디코드를 가속하는 저지연 칩이 GPU를 대체하는 것은 아니고, 이런 역할 분담은 **특정 구성** 에서 성립한다는 것입니다.
이 노트북은 그 구성이 실제로 무엇이었는지, 왜 그렇게 나누는지, 언제 맞고 언제 맞지 않는지를 숫자로 따져 봅니다.

**이 노트북을 마치면**
1. 엔비디아가 발표한 구성을, 언론의 요약과 엔비디아 자신의 설명을 구분해 말할 수 있습니다.
2. 저지연 디코드 칩이 GPU를 대체하지 않는 이유(학습, 프리필, 새 모델)를 설명할 수 있습니다.
3. 분리형 서빙이 무엇을 얻고 무엇을 치르는지(KV 캐시 전송) 계산할 수 있습니다.

**용어** (`GLOSSARY.md`): 프리필(prefill, 시드 글의 "맥락 처리"), 디코드 단계(decode phase), KV 캐시(KV cache),
분리형 서빙(disaggregated serving) — 프리필과 디코드를 다른 장치에서, 저지연 칩(low-latency chip), 학습(training), 추론(inference),
메모리 대역폭(memory bandwidth), 처리량(throughput).

**출처 표기**: 칩 수치와 발표 내용은 저장소의 `facts/hardware.md`(각 행에 원출처가 있습니다)의 행을 따릅니다.
회사 발표나 언론 수치는 **주장** 이라고 적습니다.
"""),
("code", r"""
import math
from decodelab import latency as lat
from decodelab.widgets.latency import plot_layer_split
"""),
("md", r"""
## 한 문장으로 이해하기

> **엔비디아가 설명한 구성에서는 루빈 GPU가 KV 캐시와 긴 문맥의 프리필·어텐션을, Groq 3 LPX가 디코드의 가중치가 무거운 층을 나눠 맡습니다.
> 이것은 특정 시스템 안의 분업이지, GPU를 대신하는 것이 아닙니다.**

## 왜 필요한가: 두 구간이 원하는 칩이 다르다

노트북 02에서 본 것처럼 프리필은 연산 한계, 디코드는 메모리 한계입니다. 그래서 프리필에는 FLOP/s가 큰 칩이, 디코드에는 메모리 대역폭이 큰 칩이 유리합니다.
Groq의 LPU는 가중치를 칩 안의 SRAM에 두어 대역폭이 매우 큰 대신, 칩 하나의 용량이 아주 작습니다.
"""),
("code", r"""
print(f"{'칩':22s} {'메모리':>12} {'대역폭':>14} {'FP8 FLOP/s':>13}   출처")
for name in ("H100", "H200", "B200", "Rubin", "Groq3-LPU", "Groq3-LPX"):
    hw = lat.get_hardware(name)
    print(f"{hw.name:22s} {hw.memory_bytes / 1e9:>9,.1f} GB {hw.bandwidth / 1e12:>9,.2f} TB/s {hw.flops['fp8'] / 1e15:>8,.2f} PF/s   {hw.source}")
    if hw.notes:
        print(f"{'':22s} ※ {hw.notes}")
"""),
("md", r"""
(표의 FLOP/s는 희소(sparse)가 아닌 조밀(dense) 값입니다. 루빈의 FLOP/s는 공개되지 않아, NVFP4 "50 PF" 주장에서 **가정** 으로 끌어낸 값입니다.
디코드 시간은 대역폭으로 정해지므로 이 가정에 영향을 받지 않습니다.)

LPU 한 개는 H100보다 대역폭이 약 45배 크지만 메모리는 160분의 1입니다. 70B 모델을 담는 데만 몇 개가 필요한지 세어 봅시다.
"""),
("code", r"""
m = lat.get_model("Llama-3-70B", "fp8")              # 공개 config.json, 가중치 FP8 → 70.6 GB
print(f"Llama-3-70B FP8 가중치 {m.weight_bytes / 1e9:.1f} GB를 담으려면:")
for name in ("H100", "Rubin", "Groq3-LPU"):
    print(f"  {lat.get_hardware(name).name:12s} {lat.chips_needed(m, name):>4}개")
lpx = lat.get_hardware("Groq3-LPX")
kv8k = 8192 * lat.kv_bytes_per_token(m)
users = math.floor((lpx.memory_bytes - m.weight_bytes) / kv8k)
print(f"LPX 랙(LPU 256개, SRAM {lpx.memory_bytes / 1e9:.0f} GB)에 가중치를 담고 남는 자리: 8k 문맥의 KV 캐시({kv8k / 1e9:.2f} GB) {users}명분")
print(f"루빈 GPU 한 개의 HBM4 {lat.get_hardware('Rubin').memory_bytes / 1e9:.0f} GB: 같은 KV 캐시 {math.floor(lat.get_hardware('Rubin').memory_bytes / kv8k)}명분"
      "  [용량: facts/hardware.md 'Chips'·'Racks']")
"""),
("md", r"""
가중치는 LPX 랙에 들어가지만, 사용자마다 늘어나는 KV 캐시까지 SRAM에 두기는 빠듯합니다. 이것이 KV 캐시와 어텐션을 GPU에 두는 구성이 나오는 배경입니다.

## 어떻게 이루어지는가: 무엇이 발표되었나

facts/hardware.md("The NVIDIA + Groq 3 LPX configuration")에 정리된 사실입니다.

- **경과**: 엔비디아와 Groq의 라이선스 계약 2025-12-24. Groq 3 LPX 공개 GTC 2026-03-16, 출하 2026년 하반기.
- **LPX 랙**: LPU 256개(8개씩 32트레이), SRAM 128 GB, 40 PB/s, FP8 315 PF, LPU마다 칩 간 2.5 TB/s.
- **언론의 요약**: 루빈 GPU가 프리필과 긴 문맥을, LPX가 지연에 민감한 디코드를 맡는다.
- **엔비디아 자신의 설명은 더 섬세합니다**: NVL72 랙은 여전히 프리필과 디코드를 모두 하며 "긴 문맥 처리, 디코드 어텐션"도 포함한다고 했고,
  Ian Buck은 디코드 자체가 LPU와 GPU 사이에서 **층별로** 나뉜다고 말했습니다.
  강의용으로 정리하면: **GPU는 KV 캐시를 들고 어텐션과 긴 문맥의 프리필을, LPU는 디코드에서 가중치가 무거운 층을 맡습니다.**
- **주장(측정값 아님)**: "사용자당 초당 1,000 토큰에 가까운 생성 속도", "메가와트당 추론 처리량 최대 35배"(조 단위 매개변수 모델, Tom's Hardware에 따르면
  Blackwell NVL72 대비).
- **루빈 CPX**: 프리필 전용으로 2025-09-09에 소개된 칩(GDDR7 128 GB, NVFP4 30 PF)은 2026년에 로드맵에서 빠졌습니다
  (developer.nvidia.com 블로그; 제외 소식은 tomshardware.com). 프리필을 위한 전용 칩 계획도 바뀔 수 있다는 뜻입니다.

층별 분할을 루프라인으로 어림해 봅시다. 토큰 하나를 만들 때 GPU는 KV 캐시를 읽어 어텐션을 하고, LPU는 가중치를 읽습니다.
한 토큰 안에서는 층을 차례로 지나므로 두 시간이 더해집니다(`lat.layer_split_decode_ms`).
"""),
("code", r"""
pipe = lat.layer_split_decode_ms(m, "Rubin", "Groq3-LPX", 8192)
ideal = lat.layer_split_decode_ms(m, "Rubin", "Groq3-LPX", 8192, lpu_parallel="ideal")
print(f"GPU 어텐션(KV {kv8k / 1e9:.2f} GB ÷ 22 TB/s): {pipe['gpu_attention_ms']:.3f} ms")
print(f"LPU 가중치, 층을 칩마다 나눠 차례로 통과(파이프라인): {pipe['lpu_weights_ms']:.3f} ms  → 합 {pipe['total_ms']:.2f} ms")
print(f"LPU 가중치, 256개가 모든 층을 동시에(이상적, 통신 0): {ideal['lpu_weights_ms']:.4f} ms → 합 {ideal['total_ms']:.2f} ms")
hop = (1.0 - pipe["total_ms"]) / (2 * m.n_layers)
print(f"주장 1 ms/토큰과의 차이 {1.0 - pipe['total_ms']:.2f} ms = 층마다 두 번 칩을 건너는 데 {hop * 1000:.1f} µs씩이라면 설명됨 (역산, 공개 수치 아님)")
fig = plot_layer_split(m, 8192)
"""),
("md", r"""
루프라인만 보면 0.1~0.6 ms까지 내려가지만, 엔비디아의 주장은 약 1 ms입니다. 차이는 칩 사이를 오가는 통신과 동기화 같은, 루프라인에 없는 비용입니다.
루프라인은 늘 하한이라는 점(노트북 02)을 여기서도 기억하세요. 그래도 H100 한 장의 약 22 ms와 비교하면 자릿수가 다릅니다.

## 하나의 예시로 따라가기: 분리형 서빙과 KV 캐시 전송

층별 분할보다 널리 쓰이는 분업은 **분리형 서빙(disaggregated serving)** 입니다. 프리필 장치가 프롬프트를 읽어 KV 캐시를 만들고,
그 캐시를 디코드 장치로 보내면 디코드 장치가 답을 씁니다. 대가는 **KV 캐시 전송** 입니다. 시간 ≈ 토큰 수 × 토큰당 KV 바이트 ÷ 링크 대역폭 + 지연
(facts/hardware.md "KV transfer (disaggregated)"). 8k 토큰 프롬프트, Llama-3-70B(KV는 BF16), 프리필은 H100, 디코드는 H200에서 해 봅시다.
"""),
("code", r"""
for link in ("NVLink", "400G-NIC"):
    d = lat.disaggregated(m, "H100", "H200", link, prompt_tokens=8192, output_tokens=300)
    lk = lat.get_link(link)
    print(f"{lk.name:18s} {lk.bandwidth / 1e9:>5.0f} GB/s: KV 전송 {d.transfer_ms:5.1f} ms | TTFT {d.ttft_ms:6.1f} ms "
          f"(프리필 {d.prefill_ms:.0f}) | TPOT {d.tpot_ms:.1f} ms | 전체 {d.e2e_ms / 1000:.2f} 초 (한 장에서 모두 하면 {d.colocated_e2e_ms / 1000:.2f} 초)")
print("[facts/hardware.md: 'KV transfer 2.68 GB: ~6 ms over NVLink (~450 GB/s), ~54 ms over one 400 Gb/s NIC']")
"""),
("md", r"""
요청 하나만 보면 분리형 서빙은 전송 시간만큼 TTFT를 **늘립니다**(프리필을 층별로 보내며 겹치면 일부는 숨길 수 있습니다).
H200에서 디코드가 빨라진 것은 분리 덕분이 아니라 H200의 대역폭 덕분입니다. 그러면 왜 나눌까요? 이득은 **많은 요청을 함께 다룰 때** 나옵니다.
프리필과 디코드가 한 장치에 섞이면, 긴 프리필이 진행 중인 다른 사용자들의 디코드를 막아 토큰 간 지연(ITL)이 튑니다. 나누면 각 구간을 따로 키우고 스케줄할 수 있습니다.

발표된 결과(facts/hardware.md "Disaggregated serving results"):

- DistServe(OSDI'24): 같은 지연 목표에서 최대 7.4배 많은 요청 처리(goodput), 또는 12.6배 더 엄격한 지연 목표.
- Splitwise(ISCA'24): 20% 낮은 비용으로 1.4배 처리량, 또는 같은 비용·전력으로 2.35배.
- Mooncake(arXiv 2407.00079): 실제 트래픽에서 요청 75% 더 처리.
- vLLM 문서: 분리형 프리필은 TTFT와 토큰 간 지연을 **따로 조정** 하게 해 줄 뿐, "처리량을 올리지는 않는다".

## 왜 LPX는 GPU를 대체하지 않는가

시드 글은 CNBC 보도를 근거로, GPU가 학습과 추론 모두에 쓰이고 새로운 기술과 모델에도 대응할 수 있다고 말합니다. 위 숫자로 풀어 보면:

1. **학습**: 학습은 가중치 말고도 기울기와 옵티마이저 상태를 함께 메모리에 두고, 거대한 배치로 연산 한계에서 돕니다.
   가중치를 담는 데만 LPU 142개가 필요한 모델(위 계산)을 칩당 500 MB SRAM으로 학습하는 구성은 이 발표의 대상이 아닙니다.
2. **프리필**: 프리필은 연산 한계입니다. LPU 한 개의 FP8 약 1.2 PF(Tom's Hardware 수치)는 H100 한 장의 1.98 PF(dense)보다 작고,
   긴 문맥은 사용자마다 GB 단위 KV 캐시를 만듭니다(8k 토큰에 2.68 GB). 그래서 엔비디아의 구성에서도 긴 문맥 처리와 KV 캐시는 GPU 몫입니다.
3. **새 모델**: 칩 안 SRAM에 맞춰 가중치를 나눠 싣는 방식은 모델 크기와 구조에 묶입니다. 예컨대 Llama-3-70B를 BF16(141 GB)으로 두면
   LPX 랙 하나(128 GB)에 들어가지 않습니다. GPU는 새 기법과 새 모델에 맞춰 프로그램을 바꿔 쓸 수 있습니다.
"""),
("code", r"""
bf16 = lat.get_model("Llama-3-70B", "bf16")
print(f"Llama-3-70B BF16 {bf16.weight_bytes / 1e9:.0f} GB가 LPX 랙 하나({lpx.memory_bytes / 1e9:.0f} GB)에 들어가나: "
      f"{lat.layer_split_decode_ms(bf16, 'Rubin', 'Groq3-LPX', 8192)['lpu_fits']}")
print(f"8k 프리필(FP8, 100% MFU): H100 한 장 {lat.prefill_ms(m, 'H100', 8192) / 1000:.2f} 초 vs LPU 한 개 {lat.prefill_ms(m, 'Groq3-LPU', 8192) / 1000:.2f} 초 (연산만 비교)")
"""),
("md", r"""
## 언제 쓰고 언제 쓰지 않는가

- **분업이 맞는 곳**: 사용자 한 명의 디코드 속도가 가치인 대규모 서비스(에이전트, 코딩 도우미: 노트북 03), 가중치가 LPX 랙의 SRAM에 들어가는 모델,
  GPU와 LPX를 함께 운영할 수 있는 곳.
- **맞지 않는 곳**: 학습, 작은 규모의 배포, 밤새 돌리는 일괄 처리처럼 처리량이 목표인 일(vLLM: 분리는 처리량을 올리지 않음),
  출력이 짧아 디코드가 작은 요청, 랙 메모리에 들어가지 않는 모델.
- **흔한 오해 두 가지**: "디코드 칩이 GPU를 대체한다" — 아닙니다, 위의 세 이유. "요즘 서비스는 모두 프리필과 디코드를 다른 칩에서 한다" — 아닙니다,
  한 GPU에서 둘 다 하는 구성이 흔하고, 엔비디아의 구성도 특정 시스템의 이야기입니다. 모든 시스템이 이렇게 나뉘어 있다고 넘겨짚으면 안 됩니다.
- **수치 읽기**: LPX 관련 속도와 효율은 2026년 발표 시점의 회사 주장이고, 독립 측정이 아닙니다.

## 핵심 정리

- 엔비디아의 구성: GPU가 KV 캐시·어텐션·긴 문맥 프리필을, LPU가 디코드의 가중치가 무거운 층을 맡습니다(층별 분할). 언론 요약("GPU=프리필, LPX=디코드")은 단순화입니다.
- 나누는 이유: 프리필은 연산, 디코드는 메모리 대역폭이 병목이라 서로 다른 칩이 잘 맞습니다.
- 대가: 분리형 서빙은 KV 캐시를 옮겨야 합니다(8k 토큰에 NVLink 약 6 ms, 400 Gb/s NIC 약 54 ms). 이득은 요청 하나가 아니라 많은 요청의 지연 목표에서 나옵니다.
- 저지연 디코드 칩은 학습, 프리필, 새 모델을 맡는 GPU를 대체하지 않습니다.

## 확인 문제
답을 고르거나 입력하면 바로 채점되고 해설이 나옵니다.
"""),
("code", r"""
from decodelab.quiz import quiz_widget
quiz_widget("05")
"""),
]

if __name__ == "__main__":
    build("05_chips.ipynb", cells)
