"""Build notebooks/06_review.ipynb (run: python scripts/build_nb_06.py)."""

from nbbuild import build

cells = [
("md", r"""
# 06. 복습: 전체 확인 퀴즈

노트북 01~05의 확인 문항을 모두 한곳에 모았습니다. 두 시드 글의 사실 주장 하나하나와, 노트북에서 직접 재고 계산한 것을
묻습니다. 어떤 주장이 어느 문항으로 이어지는지는 저장소의 `quizzes/COVERAGE.md`에 표로 정리되어 있습니다.

**용어** (`GLOSSARY.md`): 디코드 단계(decode phase), 프리필(prefill, 첫 시드 글의 "맥락 처리"), 토큰(token),
KV 캐시(KV cache), 첫 토큰까지의 시간(TTFT), 토큰당 출력 시간(TPOT), 토큰 간 지연(ITL), 메모리 대역폭(memory bandwidth),
에이전트 루프(agent loop), 도구 호출(tool call), 투기적 디코딩(speculative decoding), 초안 모델(draft model),
대상 모델(target model, 둘째 시드 글의 "메인 모델"), 수락률(acceptance rate), 분리형 서빙(disaggregated serving).
"""),
("md", r"""
## 핵심 정리: 다섯 노트북을 한 줄씩

1. **디코드 단계**: 모델은 응답을 토큰 하나씩 만듭니다. 다음 토큰은 앞 토큰이 있어야 계산할 수 있어서 차례로 나올 수밖에 없고,
   KV 캐시가 같은 계산의 반복을 막아 줍니다.
2. **프리필과 디코드**: 프리필은 프롬프트 전체를 한 번에 처리하는 연산 한계(compute-bound) 구간, 배치가 작은 디코드는 매 스텝
   가중치와 KV 캐시를 모두 읽는 메모리 한계(memory-bound) 구간입니다. TTFT는 주로 프리필이, TPOT은 주로 디코드가 정합니다.
3. **에이전트 루프**: 모델 호출과 도구 호출이 수십 번 되풀이되면 토큰마다의 작은 지연이 곱해져 분 단위가 됩니다. 도구 시간이
   대부분이면 디코드를 빠르게 해도 전체는 조금만 줄어듭니다(암달의 법칙).
4. **투기적 디코딩**: 작은 초안 모델이 토큰 몇 개를 먼저 제안하고 대상 모델이 한 번의 병렬 패스로 검증합니다. 결과는 대상 모델과
   같고(탐욕이면 토큰까지, 샘플링이면 분포까지), 빨라지는 정도는 수락률 α, 초안 토큰 수 γ, 비용 비율 c가 정합니다.
5. **칩 분업**: 엔비디아가 소개한 구성에서는 루빈 GPU가 긴 맥락을, Groq 3 LPX가 지연에 민감한 디코드를 맡습니다(엔비디아 자신은
   디코드도 층 단위로 나눈다고 설명). 이런 분업은 특정 구성의 이야기이며, 저지연 칩이 GPU를 대체하지는 않습니다.
"""),
("md", r"""
## 문항 수 한눈에 보기

아래 셀은 퀴즈 파일(`quizzes/01.yaml` ~ `05.yaml`)을 읽어 노트북별·종류별 문항 수를 셉니다.
종류: single(하나 고르기), multiple(모두 고르기), short(짧은 서술), numeric(숫자와 단위), ordering(순서 맞추기).
"""),
("code", r"""
from collections import Counter
from decodelab.quiz import load_quizzes

questions = load_quizzes()
by_notebook = Counter(q.notebook for q in questions)
by_kind = Counter(q.kind for q in questions)
print(f"전체 {len(questions)}문항")
print("노트북별:", dict(sorted(by_notebook.items())))
print("종류별:", dict(by_kind))
"""),
("md", r"""
## 풀이 방법

- 답을 고르거나 입력하고 **제출** 을 누르면 바로 맞았는지와 해설이 나옵니다. 틀리면 **다시 풀기** 로 다시 답하거나
  **해설 보기** 로 정답을 볼 수 있습니다. 맨 위에 점수가 쌓입니다.
- 숫자 문항은 단위를 붙여도 되고 빼도 됩니다(예: `150`, `150 s`, `2.5분`). 숫자가 아닌 것을 넣으면 안내가 나오고,
  입력한 내용은 지워지지 않습니다.
- 제출한 답은 그 자리에서 내 컴퓨터에 저장됩니다(기본 위치 `~/.decodelab/answers/`, 환경 변수 `DECODELAB_ANSWERS_DIR`로
  바꿀 수 있음). 커널을 다시 시작하거나 브라우저를 닫아도 다시 열면 그대로 보입니다. 노트북 01~05의 퀴즈와 답을 함께 씁니다.
- 다 풀었으면 맨 아래에 학번을 적고 **제출 파일 내보내기** 를 누르세요. 이 노트북 폴더에 제출 파일 하나
  (`decodelab-course-학번.json`)가 생깁니다. JupyterLab 파일 브라우저에서 오른쪽 클릭 → Download로 받아 강사에게 내면 됩니다.

**강사용**: 제출 파일을 한 폴더에 모아 `decodelab grade 제출폴더 -o gradebook.csv` 를 실행하면 학생마다 한 행, 문항마다 한 열인
성적표가 만들어집니다(제출 파일은 데이터로만 읽고, 깨진 파일은 건너뛰며 알려 줍니다). 정답과 해설을 뺀 시험용 배포본은
`decodelab quiz release 배포폴더` 로 만듭니다.
"""),
("code", r"""
from decodelab.quiz import quiz_widget
quiz_widget("all")
"""),
]

if __name__ == "__main__":
    build("06_review.ipynb", cells)
